// Wording the Version History view shares with the palette (src/vscode) and the CLI, so all of them say the
// same. No vscode, no DOM: the webview, the host, the core's model builder and the CLI import it.
import type { VersionKindName } from '../domain/versionsModel';

export const KIND_LABEL: Record<VersionKindName, string> = {
  agent: 'Agent',
  interrupted: 'Interrupted',
  recovery: 'Recovery',
  restore: 'Restore',
  user: 'Commit',
};

/** "3 minutes ago" for an age in seconds. */
export function relativeTime(seconds: number): string {
  if (seconds < 60) return 'just now';
  const units: [number, string][] = [
    [86400 * 365, 'year'],
    [86400 * 30, 'month'],
    [86400, 'day'],
    [3600, 'hour'],
    [60, 'minute'],
  ];
  for (const [size, name] of units) {
    if (seconds >= size) {
      const n = Math.floor(seconds / size);
      return `${n} ${name}${n === 1 ? '' : 's'} ago`;
    }
  }
  return 'just now';
}

/** The text the pane shows while recovery is required (docs/product-contract.md §6), with no buttons of its own. */
export const BLOCKED_MESSAGE =
  'Version History is temporarily unavailable — Resolve the version recovery notice to continue.';

/** The branch-loss warning entry's sentence (docs/product-contract.md §7), the same in Version History and the CLI. */
export function continuationWarningText(newBranch: string, oldBranch: string): string {
  return `Conversation continues on \`${newBranch}\`; code changes from \`${oldBranch}\` were not recovered.`;
}

/** The action that restores the working tree to just before an agent's destructive command (issue 34). */
export const RESTORE_BEFORE_COMMAND = 'Restore to Before This Command';

/**
 * The end-of-turn notice (issue 34): what ran (the content-free label, `git clean -x`) and how many of the files there
 * before it are gone or changed at the turn's end; the button is RESTORE_BEFORE_COMMAND.
 */
export function checkpointNoticeText(step: {
  label: string;
  files: readonly { status: 'modified' | 'deleted' }[];
}): string {
  const deleted = step.files.filter((f) => f.status === 'deleted').length;
  const changed = step.files.length - deleted;
  const files = (n: number) => `${n} file${n === 1 ? '' : 's'}`;
  const what =
    deleted > 0 && changed > 0
      ? `${files(deleted)} it deleted and ${changed} it changed were saved`
      : deleted > 0
        ? `${files(deleted)} it deleted ${deleted === 1 ? 'was' : 'were'} saved`
        : `${files(changed)} it changed ${changed === 1 ? 'was' : 'were'} saved`;
  return `The agent ran \`${step.label}\`; ${what} — ${RESTORE_BEFORE_COMMAND}.`;
}
