/**
 * The restore's confirmation refusals as one discriminated union, carried by the error that refuses (nothing
 * changed): the CLI and the extension read the refusal by its kind and word it from the copy in restoreCopy.ts,
 * never by sniffing `details` or splitting its strings. `details` (what `--json`, the extension API and the tests
 * read) are derived from the refusal, as they always were.
 */
import { AvhError } from '../errors';
import {
  CONFIRM_IN_UI,
  type ConfirmationWords,
  laterWorkEverythingRefusal,
  laterWorkRefusal,
  otherChatsRefusal,
  PLAN_CHANGED_REFUSAL,
  userCommitsRefusal,
} from './restoreCopy';

export type ConfirmationRefusal =
  /**
   * An Undo (no `only` chosen) after which later turns or reverts landed: they would go (or come back) with it.
   * `choice`: Undo Only This Turn is the other answer; false when the turn made no version of its own (only Restore
   * Everything to Before This Turn can undo it). `laterWork` is describeLaterWork's content-free text.
   */
  | { kind: 'later-work'; laterTurns: number; laterWork: string; choice: boolean }
  /** The restore undoes commits the user made themselves after the target (they stay reachable). */
  | { kind: 'user-commits'; count: number }
  /**
   * Undo Only This Turn / Undo This File would change files another chat wrote (docs/design/two-chats.md): the
   * chats (`codex chat 01a232c3`) and the files, sorted.
   */
  | { kind: 'other-chats'; chats: readonly string[]; files: readonly string[] }
  /**
   * What the restore would do changed since the preview the user confirmed (a new turn, a commit): asked again.
   * `userCommits` of the plan as it is now.
   */
  | { kind: 'plan-changed'; userCommits: number };

/** A refusal's message, in the caller's words for how to confirm. */
export function refusalStatement(refusal: ConfirmationRefusal, words: ConfirmationWords): string {
  switch (refusal.kind) {
    case 'later-work':
      return refusal.choice
        ? laterWorkRefusal(refusal.laterWork, words)
        : laterWorkEverythingRefusal(refusal.laterWork, words);
    case 'user-commits':
      return userCommitsRefusal(refusal.count, words);
    case 'other-chats':
      return otherChatsRefusal(refusal.chats, refusal.files, words);
    case 'plan-changed':
      return PLAN_CHANGED_REFUSAL;
  }
}

/** The refusal as the error's safe `details` (the keys the `--json` output, the API and the tests have read). */
function refusalDetails(refusal: ConfirmationRefusal): Record<string, string | number | boolean> {
  switch (refusal.kind) {
    case 'later-work':
      return { count: refusal.laterTurns, choice: refusal.choice, laterWork: refusal.laterWork };
    case 'user-commits':
      return { count: refusal.count };
    case 'other-chats':
      return { count: refusal.files.length, otherChats: refusal.chats.join('\n'), files: refusal.files.join('\n') };
    case 'plan-changed':
      return { planChanged: true, count: refusal.userCommits };
  }
}

/**
 * A restore that needs the user's confirmation first (reason 'confirmation-required'; nothing changed). `words`:
 * how the caller confirms (the core's own by default; the CLI rewords the same refusal with its flags).
 */
export class ConfirmationRequired extends AvhError {
  /** Recognised across bundles (errors.ts). */
  static override readonly brand: string = 'ConfirmationRequired';

  constructor(
    readonly refusal: ConfirmationRefusal,
    words: ConfirmationWords = CONFIRM_IN_UI,
  ) {
    super('confirmation-required', refusalStatement(refusal, words), refusalDetails(refusal));
    this.name = 'ConfirmationRequired';
  }
}
