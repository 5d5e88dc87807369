/**
 * The copy of a restore's confirmation refusals, chosen from what the refusal's typed details say (the count, the
 * later work described) and from how the caller confirms: the palette and the API confirm with a choice or a
 * modal, the CLI with its flags. One place: nobody builds this copy by editing another message.
 */

/** How a caller says it confirms: after the choice between the two Undos, and after undoing the user's commits. */
export interface ConfirmationWords {
  readonly choose: string;
  readonly confirm: string;
}

/** The core's own words (the palette asks with a modal; the API caller passes the options). */
export const CONFIRM_IN_UI: ConfirmationWords = {
  choose: 'Nothing was changed.',
  confirm: 'Confirm to continue; nothing was changed.',
};

/** Work landed after the turn: Undo asks which of the two Undos. `later` is describeLaterWork's content-free text. */
export function laterWorkRefusal(later: string, words: ConfirmationWords): string {
  return (
    `Work landed after this turn: ${later}. Choose Undo Only This Turn (keeps it) or Restore Everything to ` +
    `Before This Turn (takes it away too; it stays in history). ${words.choose}`
  );
}

/**
 * Work landed after a turn that made no version of its own (running, stopped, or its version could not be made):
 * only Restore Everything to Before This Turn can undo it, and it takes that work away too.
 */
export function laterWorkEverythingRefusal(later: string, words: ConfirmationWords): string {
  return (
    `Work landed after this turn: ${later}. This turn made no version of its own, so Undo restores everything to ` +
    `before it and takes that work away too (it stays in history). ${words.confirm}`
  );
}

/**
 * What the restore would do changed since the user confirmed it (a new turn, a commit): only a caller that pins a
 * preview (`expectedPlan`: the palette, the view) meets it, and asks again.
 */
export const PLAN_CHANGED_REFUSAL =
  'What this restore would do changed since it was confirmed (a new turn or a commit). Confirm again; nothing ' +
  'was changed.';

/** The restore would undo commits the user made after the target (they stay reachable). */
export function userCommitsRefusal(count: number, words: ConfirmationWords): string {
  return (
    `This restore undoes ${count} commit${count === 1 ? '' : 's'} you made yourself after that version (they stay ` +
    `reachable in history). ${words.confirm}`
  );
}

/** Undo Only This Turn does not apply cleanly: the files later work changed the same lines in (at most ten named). */
export function revertConflictStatement(conflicts: readonly string[]): string {
  const shown = conflicts.slice(0, 10).join(', ');
  const more = conflicts.length > 10 ? ` and ${conflicts.length - 10} more` : '';
  return `Undo Only This Turn cannot apply cleanly: later work changed the same lines in ${shown}${more}.`;
}

/**
 * Undo Only This Turn / Undo This File would change files another chat wrote (docs/design/two-chats.md): the chats
 * and the files (at most ten named), and that its edits there may go. Nothing is guessed: the user confirms.
 */
export function otherChatsRefusal(
  chats: readonly string[],
  files: readonly string[],
  words: ConfirmationWords,
): string {
  const shown = files.slice(0, 10).join(', ');
  const more = files.length > 10 ? ` and ${files.length - 10} more` : '';
  const who =
    chats.length === 1 ? `Another chat (${chats[0]}) also wrote` : `Other chats (${chats.join(', ')}) also wrote`;
  return (
    `${who} ${files.length === 1 ? 'a file' : 'files'} this Undo changes: ${shown}${more}. Its edits there may be ` +
    `taken away with this turn's. ${words.confirm}`
  );
}

/** What an Undo that keeps later work took back: only the turn's changes, one file of them, or one change. */
export type KeptUndoScope = 'turn' | 'file' | 'change';

/**
 * What an Undo that keeps later work did (Undo Only This Turn, Undo This File, Undo This Change), in the CLI's and
 * the extension's result alike: what went back, the new `[Revert]` version (`abbrev` characters of its id, each
 * surface's own length) and the uncommitted changes saved first. "Kept" only where it is true: files another chat
 * also wrote (`otherChatFiles`, the user confirmed them) may have lost that chat's edits, and are named.
 */
export function keptUndoResult(
  r: { scope: KeptUndoScope; restoreCommit?: string; preserved?: string; otherChatFiles?: readonly string[] },
  abbrev: number,
): string {
  const others = r.otherChatFiles ?? [];
  const what =
    r.scope === 'file'
      ? 'The file is back to its content before the turn'
      : r.scope === 'change'
        ? 'This change of the turn was undone (the rest of the turn and later work kept)'
        : others.length > 0
          ? `Only this turn was undone (later work kept, except another chat’s edits in ${others.length} ` +
            `file${others.length === 1 ? '' : 's'} you confirmed: ${others.slice(0, 10).join(', ')})`
          : 'Only this turn was undone (later work kept)';
  const saved = r.preserved ? ` Your uncommitted changes were saved first (${r.preserved.slice(0, abbrev)}).` : '';
  return `${what} — a new [Revert] version ${r.restoreCommit?.slice(0, abbrev) ?? ''} was added.${saved}`;
}
