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

/**
 * The base of a turn begun on a clean tree with a commit: HEAD itself, with no snapshot commit
 * (docs/product-contract.md §4.1).
 */
export function cleanTreeBase(head: string): TurnBase {
  return { baseHead: head, baseCommit: head, baseTree: null };
}

/**
 * What a turn's terminal write records about its version (docs/product-contract.md §4.2), before any commit: 'pending'
 * for a completed turn until its commit settles it, 'recovery-required' when recovery is latched (nothing is committed
 * then). A turn that did not complete never gets a version: 'no-changes' when its end found the tree exactly at its
 * base (`changed` false: it changed nothing, so it is never Undo's target), else 'not-completed' (its partial work
 * is in the tree).
 */
export function versionStateAtEnd(outcome: TerminalOutcome, recoveryLatched: boolean, changed = true): NoVersionReason {
  if (outcome !== 'completed') return changed ? 'not-completed' : 'no-changes';
  return recoveryLatched ? 'recovery-required' : 'pending';
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

/**
 * An end event for a chat with no running turn: whether it re-ends the chat's latest turn. Only `errored` ever does,
 * and only over `cancelled`: Claude Code sends StopFailure (errored) and SessionEnd (cancelled) for the same failed
 * turn within milliseconds, in either order, so a cancel recorded first gives way to the error that follows. An
 * outcome is never downgraded (a later cancel leaves `errored` as it is), a completed turn is never touched, and
 * neither is a turn anything happened to since: a later prompt of its chat, an Undo, Redo or Restore that named it.
 * Everything else is ignored, as a Stop after an interrupted prompt always was.
 */
export function reEnds(
  incoming: TerminalOutcome,
  latest: { outcome: TerminalOutcome | null; latestOfChat: boolean; actedOnSince: boolean } | null,
): boolean {
  return (
    incoming === 'errored' &&
    latest !== null &&
    latest.outcome === 'cancelled' &&
    latest.latestOfChat &&
    !latest.actedOnSince
  );
}

/**
 * Whether an end event with no running turn may re-end one (reEnds): the full path then reads the chat's latest
 * turn; the fast path, whose facts do not describe ended turns, leaves it to the full path.
 */
export function mayReEnd(incoming: TerminalOutcome): boolean {
  return incoming === 'errored';
}

/** The order a begin ends its chat's still-running turns in, as cancelled: lowest turn number first. */
export function cancellationOrder<T extends { seq: number }>(running: readonly T[]): T[] {
  return [...running].sort((a, b) => a.seq - b.seq);
}
