import type { TerminalOutcome } from '../outcomes';
import type { PreservationReason } from '../store/schema';
import type { StoreReader, StoreTx } from '../store/durableStore';
import { workWithoutVersion } from '../domain/turnEffect';
import type { TurnRow } from '../turns/turnRecords';

/**
 * The one place that decides whether Undo preserves the dirty tree (docs/product-contract.md §5.2). A running turn is
 * cancelled by Undo first (active-cancel); a durable cancelled/errored outcome preserves, and so does a completed turn
 * whose version could not be made (index.lock at its end, a moved branch, a crash before the commit: its work is in the
 * tree as a stopped turn's is, issue 25); a completed turn with a version, or one that changed nothing, and an
 * unknown outcome never do.
 *
 * Legacy rule (reference plan, narrowed to our data): a terminal turn with a NULL outcome — only possible for
 * rows written before outcomes existed — counts as cancelled only when it made no version commit AND a later
 * turn of the same chat began before it ended (the interrupted-by-the-next-prompt pattern). Dirtiness alone,
 * or a missing commit alone, never counts.
 */
export function preservationFor(r: StoreReader | StoreTx, turn: TurnRow): PreservationReason {
  if (turn.recovery !== 'terminal') return 'active-cancel';
  const outcome: TerminalOutcome | 'unknown' = turn.terminal_outcome ?? legacyOutcome(r, turn);
  if (outcome === 'cancelled' || outcome === 'errored') return 'durable-cancelled-turn';
  return outcome === 'completed' && versionNotMade(turn) ? 'durable-cancelled-turn' : 'none';
}

/**
 * A completed turn whose version was expected but not made: it recorded why (a lock, a refusing hook, git failing,
 * recovery latched, …; not 'no-changes', nothing of its own, nor 'pending', which reconciliation settles first) and
 * it changed something. Its work is in the tree and in no commit, as a cancelled turn's is: Undo saves it first.
 */
function versionNotMade(turn: TurnRow): boolean {
  if (turn.version_commit !== null || turn.no_version_reason === null) return false;
  if (turn.no_version_reason === 'no-changes' || turn.no_version_reason === 'pending') return false;
  return workWithoutVersion(turn);
}

function legacyOutcome(r: StoreReader | StoreTx, turn: TurnRow): 'cancelled' | 'unknown' {
  if (turn.version_commit !== null || turn.ended_at === null) return 'unknown';
  const interrupted = r.get<{ x: number }>(
    'SELECT 1 AS x FROM turns WHERE chat_id = ? AND seq = ? AND created_at <= ?',
    [turn.chat_id, turn.seq + 1, turn.ended_at],
  );
  return interrupted ? 'cancelled' : 'unknown';
}
