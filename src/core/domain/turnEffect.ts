/**
 * What a turn did to the working tree, as the store records it (docs/design/turns-and-undo.md): the one definition
 * Undo's target, the status bar's count, the Version History view and the archive's counts share. No imports, so
 * the store, the restore saga and the view can all use it.
 *
 * A turn "changed nothing" when it ended with the tree exactly as its base snapshot: a completed turn that made no
 * version because nothing differed (a question), or a cancelled or errored turn whose end found the tree at its base
 * (no_version_reason 'no-changes', decided once, when it ended). Every other turn changed something: a running one
 * (until it ends), one with a version, one whose partial work stayed in the tree, one whose version could not be made.
 */

/** The no_version_reason of a turn that changed nothing, whatever its outcome. */
export const NO_CHANGES = 'no-changes';

/** SQL: the turn changed something (or may have: it is still running). Columns of `turns`, unqualified. */
export const CHANGED_SOMETHING_SQL =
  "NOT (recovery = 'terminal' AND version_commit IS NULL AND COALESCE(no_version_reason, '') = 'no-changes')";

/** SQL: a turn of the branch that Undo can still take back (not undone, with a base) and that changed something. */
export const UNDOABLE_SQL = `undone_by IS NULL AND base_commit IS NOT NULL AND ${CHANGED_SOMETHING_SQL}`;

export interface TurnEffectFields {
  recovery: string;
  version_commit: string | null;
  no_version_reason: string | null;
}

/** CHANGED_SOMETHING_SQL for a row in hand. */
export function changedSomething(turn: TurnEffectFields): boolean {
  return !(turn.recovery === 'terminal' && turn.version_commit === null && turn.no_version_reason === NO_CHANGES);
}

/**
 * A terminal turn that changed something but has no version: a cancelled or errored turn's partial work, or a
 * completed turn whose version could not be made (index.lock, a moved branch, a crash before the commit…). Undo
 * saves its work as `[Interrupted]` first, whatever the outcome.
 */
export function workWithoutVersion(turn: TurnEffectFields): boolean {
  return turn.recovery === 'terminal' && turn.version_commit === null && changedSomething(turn);
}
