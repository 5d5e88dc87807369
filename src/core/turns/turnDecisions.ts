import type { TerminalOutcome } from '../outcomes';
import type { NoVersionReason } from './turnRecords';

/**
 * The decisions a turn's begin and end make, as pure functions of what the store and git say: the ledger
 * (turnLedger.ts), the hook's full path (src/cli/hooks/runHook.ts) and its fast path (src/cli/hooks/fastHook.ts,
 * which decides from hookFacts.ts without sql.js) take them from here, so the two hook paths cannot drift apart.
 */

/** Where a turn began: HEAD then, the commit holding the exact pre-turn state, and its tree when that is no commit. */
export interface TurnBase {
  baseHead: string | null;
  baseCommit: string | null;
  baseTree: string | null;
}

/** The base of a turn begun on a clean tree with a commit: HEAD itself, with no snapshot commit (SPEC §4.1). */
export function cleanTreeBase(head: string): TurnBase {
  return { baseHead: head, baseCommit: head, baseTree: null };
}

/**
 * What a turn's terminal write records about its version (SPEC §4.2), before any commit: 'pending' for a
 * completed turn until its commit settles it, 'recovery-required' when recovery is latched (nothing is committed
 * then), 'not-completed' for a turn that did not complete (it never gets a version).
 */
export function versionStateAtEnd(outcome: TerminalOutcome, recoveryLatched: boolean): NoVersionReason {
  return outcome !== 'completed' ? 'not-completed' : recoveryLatched ? 'recovery-required' : 'pending';
}

/**
 * Whether a completed turn changed nothing, known without comparing trees: it began on the clean tree at `head`
 * (cleanTreeBase) and the tree is clean at that same HEAD now. The ledger's commit then finds 'no-changes'.
 */
export function unchangedSinceBase(base: TurnBase, cleanHead: string): boolean {
  return base.baseTree === null && base.baseCommit === cleanHead && base.baseHead === cleanHead;
}

/**
 * How an agent's end event applies to its chat's running turns (oldest first): the newest takes the event's
 * outcome, the older ones end cancelled (an interrupted turn gets no Stop). Null when none runs: the event is
 * ignored (a Stop after an interrupted prompt, a duplicate).
 */
export function endOfChat<T>(running: readonly T[]): { last: T; older: T[] } | null {
  if (running.length === 0) return null;
  return { last: running[running.length - 1], older: running.slice(0, -1) };
}

/** The order a begin ends its chat's still-running turns in, as cancelled: lowest turn number first. */
export function cancellationOrder<T extends { seq: number }>(running: readonly T[]): T[] {
  return [...running].sort((a, b) => a.seq - b.seq);
}
