// Wording shared by the palette (src/vscode) and the Version History view (webview/), so both say the same.
import type { VersionKindName } from './viewModels';

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
