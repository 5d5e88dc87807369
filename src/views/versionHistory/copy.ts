// Wording the Version History view shares with the palette (src/vscode) and the CLI, so all of them say the
// same. No vscode, no DOM: the webview, the host, the core's model builder and the CLI import it.
import type { VersionKindName } from './protocol';

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

/** The text the pane shows while recovery is required (SPEC §6), with no buttons of its own. */
export const BLOCKED_MESSAGE =
  'Version History is temporarily unavailable — Resolve the version recovery notice to continue.';

/** The branch-loss warning entry's sentence (SPEC §7), the same in Version History and the CLI. */
export function continuationWarningText(newBranch: string, oldBranch: string): string {
  return `Conversation continues on \`${newBranch}\`; code changes from \`${oldBranch}\` were not recovered.`;
}
