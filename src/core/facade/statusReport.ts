import type { RepoContext } from '../context';
import { inspectRepositoryHealth, type RepositoryHealth } from '../git/healthProbe';
import { inFlightOperation } from '../operations/operationRecords';
import { readRecovery, type RecoveryLatch } from '../operations/recoveryLatch';
import { archivedCounts } from '../store/archive';
import { countTurns, openTurns } from '../turns/turnRecords';

export interface RunningTurnInfo {
  turnId: string;
  chatId: string;
  agent: string | null;
  startedAt: number;
}

export interface StatusReport {
  root: string;
  /** Without the paths the status listed (internal to snapshots; thousands in a big repository, never reported). */
  health: Omit<RepositoryHealth, 'listed'>;
  runningTurns: RunningTurnInfo[];
  counts: { turns: number; runningTurns: number };
  recovery: RecoveryLatch | null;
  /** A restore in flight (in this or another process), if any. */
  operation: { id: string; kind: string; phase: string } | null;
}

/** The repository's health, running turns, counts (archived included), recovery latch and operation. Read-only. */
export async function statusReport(ctx: RepoContext): Promise<StatusReport> {
  const [health, state] = await Promise.all([
    inspectRepositoryHealth(ctx.repo),
    ctx.store.read((r) => ({
      running: openTurns(r),
      counts: countTurns(r),
      archived: archivedCounts(r).rows,
      recovery: readRecovery(r),
      operation: inFlightOperation(r),
    })),
  ]);
  const { listed: _listed, ...shown } = health;
  return {
    root: ctx.repo.root,
    health: shown,
    runningTurns: state.running.map(toRunningInfo),
    counts: { turns: state.counts.total + state.archived, runningTurns: state.counts.open },
    recovery: state.recovery,
    operation: state.operation
      ? { id: state.operation.id, kind: state.operation.kind, phase: state.operation.phase }
      : null,
  };
}

/** The running turns of one chat. Read-only. */
export function runningTurnsOfChat(ctx: RepoContext, chatId: string): Promise<RunningTurnInfo[]> {
  return ctx.store.read((r) =>
    openTurns(r)
      .filter((t) => t.chat_id === chatId)
      .map(toRunningInfo),
  );
}

function toRunningInfo(t: { id: string; chat_id: string; agent: string | null; created_at: number }): RunningTurnInfo {
  return { turnId: t.id, chatId: t.chat_id, agent: t.agent, startedAt: t.created_at };
}
