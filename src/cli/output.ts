import type { RestoreResult, StatusReport, VersionInfo } from '../core/versionHistory';

/** How results read at a terminal. Everything that came from a repository is made single-line and escape-free first. */

/**
 * Commit subjects and file names come from the repository: control characters (a terminal escape sequence in a
 * crafted subject) are replaced so printing them can never drive the terminal.
 */
export function terminalSafe(text: string): string {
  // eslint-disable-next-line no-control-regex -- control characters are exactly what is being replaced
  return text.replace(/[\u0000-\u001f\u007f-\u009f]/g, '?');
}

const KIND_LABELS: Record<VersionInfo['kind'], string> = {
  agent: 'Agent',
  interrupted: 'Interrupted',
  recovery: 'Recovery',
  restore: 'Restore',
  user: 'Commit',
};

/** `2026-11-30 15:09` in the local time zone (what `git log --date=format-local` would show). */
export function localTime(seconds: number): string {
  const d = new Date(seconds * 1000);
  const two = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())} ${two(d.getHours())}:${two(d.getMinutes())}`;
}

/** The subject without our canonical `[Kind] ` prefix (the kind has its own column). */
function summaryOf(v: VersionInfo): string {
  return v.kind === 'user' ? v.subject : v.subject.replace(/^\[[A-Za-z]+\] /, '');
}

/**
 * `versions` for people: one row per version, newest first; the summary column last, so long ones do not skew the
 * table.
 */
export function versionsTable(versions: readonly VersionInfo[]): string {
  if (versions.length === 0) return 'No versions yet: this branch has no commits.';
  const rows = versions.map((v) => [
    localTime(v.time),
    KIND_LABELS[v.kind],
    v.outcome ?? '',
    v.oid.slice(0, 10),
    terminalSafe(summaryOf(v)),
  ]);
  const header = ['TIME', 'KIND', 'OUTCOME', 'COMMIT', 'SUMMARY'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i])))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)].join('\n');
}

export function statusText(s: StatusReport): string {
  const h = s.health;
  const branch = h.branch ? terminalSafe(h.branch) : h.detached ? '(detached HEAD)' : '(none)';
  const c = h.counts;
  const tree = `${c.staged} staged, ${c.unstaged} modified, ${c.untracked} untracked, ${c.unmerged} unmerged`;
  const latch = s.recovery;
  const recovery = latch
    ? `required (operation ${latch.operationId ?? 'unknown'}, last phase ${latch.lastPhase ?? 'unknown'})`
    : 'not required';
  return [
    `repository: ${s.root}`,
    `branch: ${branch}${h.unborn ? ' (no commits yet)' : ''}`,
    `working tree: ${h.clean ? 'clean' : tree}`,
    ...(h.operations.length ? [`in progress: ${h.operations.join(', ')}`] : []),
    ...(h.indexLocked ? ['index.lock is held'] : []),
    `turns: ${s.counts.turns} recorded, ${s.counts.runningTurns} running`,
    `recovery: ${recovery}`,
  ].join('\n');
}

export function restoreText(r: RestoreResult): string {
  switch (r.result) {
    case 'restored':
      return (
        `Restored version ${r.target?.slice(0, 10)} as ${r.restoreCommit?.slice(0, 10)}.` +
        (r.preserved
          ? ` Partial changes were saved as an Interrupted entry in Version History (${r.preserved.slice(0, 10)}).`
          : '')
      );
    case 'no-change':
      return 'Nothing to restore: the working tree already matches that version; no commit was made.';
    case 'nothing-to-undo':
      return 'Nothing to undo: no agent turn on this branch is left to undo.';
    default:
      return 'Nothing to redo.';
  }
}

export function restoreJson(r: RestoreResult): Record<string, unknown> {
  return {
    result: r.result,
    ...(r.restoreCommit ? { restoreCommit: r.restoreCommit } : {}),
    ...(r.preserved ? { preserved: r.preserved } : {}),
    ...(r.turnId ? { turnId: r.turnId } : {}),
  };
}
