import type { RepoContext } from '../context';
import { versionRecords } from '../git/versionLog';
import type { TerminalOutcome } from '../outcomes';
import { kindOfSubject, VersionKind } from '../domain/promptSummary';

export interface VersionInfo {
  oid: string;
  subject: string;
  kind: VersionKind;
  turnId?: string;
  outcome?: TerminalOutcome;
  /** Commit time, seconds since the epoch. */
  time: number;
}

const FIELD = '\x1f';
const RECORD = '\x1e';

/**
 * Versions of the current branch, newest first; kinds from subjects, turn ids from trailers, outcomes from the store.
 */
export async function listVersions(ctx: RepoContext, limit = 100, skip = 0): Promise<VersionInfo[]> {
  const stdout = await versionRecords(
    ctx.repo.root,
    limit,
    skip,
    `%H${FIELD}%s${FIELD}%ct${FIELD}%(trailers:key=Agent-Turn,valueonly,separator=%x2c)${RECORD}`,
  );
  if (stdout === null) return []; // unborn branch: no versions yet
  const versions: VersionInfo[] = [];
  for (const record of stdout.split(RECORD)) {
    const trimmed = record.replace(/^\n/, '');
    if (!trimmed) continue;
    const [oid, subject, time, trailer] = trimmed.split(FIELD);
    const turnId = trailer?.trim().split(',')[0] || undefined;
    versions.push({ oid, subject, kind: kindOfSubject(subject), time: Number(time), ...(turnId ? { turnId } : {}) });
  }
  const ids = versions.flatMap((v) => (v.turnId ? [v.turnId] : []));
  if (ids.length > 0) {
    const outcomes = await ctx.store.read(
      (r) =>
        r.all<{ id: string; terminal_outcome: TerminalOutcome | null }>(
          `SELECT id, terminal_outcome FROM turns WHERE id IN (${ids.map(() => '?').join(',')})`,
          ids,
        ),
      { history: true },
    );
    const byId = new Map(outcomes.map((o) => [o.id, o.terminal_outcome]));
    for (const v of versions) {
      const outcome = v.turnId ? byId.get(v.turnId) : undefined;
      if (outcome) v.outcome = outcome;
    }
  }
  return versions;
}
