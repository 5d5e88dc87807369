// What callers ask of a restore and what they get back: the CLI, the extension and the API share these types.
import type { UndoScope } from '../store/schema';
import type { LaterWork } from './revertPlan';

/** Undo's choice when work landed after the turn: only the turn's own changes, or everything since its base. */
export type UndoOnly = 'turn' | 'everything';

/**
 * Undo This Change (issue 26): the line of a file as it is now (saved; repository-relative) whose turn change to take
 * back. The request names the turn too: planning refuses when the line is no longer that turn's.
 */
export interface ChangeAtLineRequest {
  path: string;
  line: number;
}

/** What an Undo took back, as callers see it: a stored scope, or 'change' (Undo This Change: scope 'file' + hunk). */
export type UndoResultScope = UndoScope | 'change';

export type RestoreRequest =
  /**
   * `only` unset: today's Undo (everything since the turn's base), refused with 'confirmation-required' when it
   * would take away later agent turns or user commits unconfirmed. `path`: Undo This File (one path of the turn).
   * `change` (with `turnId`): Undo This Change, the one hunk of the turn holding that line.
   */
  | { kind: 'undo'; turnId?: string; only?: UndoOnly; path?: string; change?: ChangeAtLineRequest }
  | { kind: 'redo' }
  | { kind: 'restore'; target: string };

export interface RestoreOptions {
  /** The user agreed to undo commits they made themselves after the target (palette modal / CLI --yes). */
  confirmUserCommits?: boolean;
  /**
   * The fingerprint of the preview the user confirmed. When the plan differs under the lease (a new turn, a
   * commit since), the restore is refused with 'confirmation-required' (details.planChanged) and nothing changes,
   * so the caller asks again instead of running something that was never confirmed.
   */
  expectedPlan?: string;
  /**
   * The user agreed that Undo Only This Turn / Undo This File changes files another chat wrote (its edits there may
   * go: docs/design/two-chats.md). CLI --yes; the palette asks with a modal.
   */
  confirmOtherChats?: boolean;
  /** Told when Undo ends a still-running turn as cancelled (the API forwards it to the agent). */
  onTurnCancelled?: (turn: { turnId: string; chatId: string }) => void;
}

export interface RestoreResult {
  result: 'restored' | 'nothing-to-undo' | 'nothing-to-redo' | 'no-change';
  operationId?: string;
  restoreCommit?: string;
  /** The `[Interrupted]` commit holding partial changes saved before restoring. */
  preserved?: string;
  target?: string;
  turnId?: string;
  /** Said once per folder: nested repositories the restore left untouched (Version History does not version them). */
  notice?: string;
  /** Undo: what it took back (everything since the turn, only the turn's changes, one file or one change of them). */
  scope?: UndoResultScope;
  /**
   * Undo Only This Turn / Undo This File, confirmed over another chat's writes: the files where that chat's edits may
   * have gone with this turn's (later work elsewhere was kept).
   */
  otherChatFiles?: string[];
}

export interface RestorePreview {
  kind: RestoreRequest['kind'];
  /** Nothing to do: no turn left to undo, nothing to redo, or (`no-change`) the turn changed nothing. */
  nothing?: 'nothing-to-undo' | 'nothing-to-redo' | 'no-change';
  target?: string;
  turnId?: string;
  /** Commits the user made themselves after the target that this restore undoes (they stay in history). */
  userCommits: number;
  /** Undo: what this Undo would take back as planned. */
  scope?: UndoResultScope;
  /**
   * Undo of a turn whose version is in HEAD's history: what landed after it. When anything did (anyLaterWork),
   * the UI offers Undo Only This Turn next to Restore Everything (which takes all of it away).
   */
  later?: LaterWork;
  /**
   * When work landed after the turn: whether Undo Only This Turn applies cleanly, and the files it conflicts in;
   * `noVersion` when it does not apply at all (a running or stopped turn made no version of its own to reverse:
   * only Restore Everything to Before This Turn can undo it).
   */
  onlyTurn?: { conflicts: string[]; noVersion?: true };
  /**
   * Undo Only This Turn (or Undo This File) would change files another chat wrote: the chats and files to name in
   * the question (confirm with `confirmOtherChats`).
   */
  otherChats?: { chats: string[]; files: string[] };
  /** Names exactly what would run (branch, HEAD, target, turn, user commits): pass it back as `expectedPlan`. */
  fingerprint: string;
}
