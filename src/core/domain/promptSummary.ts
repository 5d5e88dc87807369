/** `[Agent] <first line of the prompt, at most 72 characters>` (docs/product-contract.md §4.3). */
export function agentSubject(prompt: string): string {
  const firstLine =
    prompt
      .split(/\r?\n/)
      .map((l) => l.trim())
      .find((l) => l.length > 0) ?? '';
  // eslint-disable-next-line no-control-regex -- control characters are exactly what is being removed
  const chars = Array.from(firstLine.replace(/[\u0000-\u001f\u007f]/g, ' '));
  const summary = chars.length > 72 ? `${chars.slice(0, 71).join('').trimEnd()}…` : chars.join('');
  return `[Agent] ${summary || 'Agent turn'}`;
}

export const INTERRUPTED_SUBJECT = '[Interrupted] Saved partial changes before restoring to an earlier version';
/**
 * The user's own uncommitted edits, saved before an Undo that keeps later work (kind 'interrupted': saved by us before
 * a restore).
 */
export const SAVED_EDITS_SUBJECT = '[Interrupted] Saved uncommitted changes before undoing a turn';
export const RECOVERY_SUBJECT = '[Recovery] Saved current changes before continuing Version History';
export const restoreSubject = (oid: string) => `[Restore] Restored version ${oid.slice(0, 7)}`;
/** Undo Only This Turn / Undo This File: a restore of ours too (kind 'restore'), named after what it took back. */
export const REVERT_PREFIX = '[Revert] ';

export type VersionKind = 'agent' | 'interrupted' | 'recovery' | 'restore' | 'user';

/** The version's kind comes from its canonical subject prefix alone, so it survives a lost state database. */
export function kindOfSubject(subject: string): VersionKind {
  if (subject.startsWith('[Agent] ')) return 'agent';
  if (subject.startsWith('[Interrupted] ')) return 'interrupted';
  if (subject.startsWith('[Recovery] ')) return 'recovery';
  if (subject.startsWith('[Restore] ') || subject.startsWith(REVERT_PREFIX)) return 'restore';
  return 'user';
}
