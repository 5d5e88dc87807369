import type { ErrorReason } from '../errors';
import { AvhError } from '../errors';
import type { GitOperation, RepositoryHealth } from './statusProbe';

/**
 * The one gate between a repository's state and "may proceed". Every entry point (turn begin, turn end's
 * commit, restore planning, recovery assessment) asks it, so they all name the same blocker in the same order:
 * recovery required > restore in flight > operation in progress (named by kind) > unmerged paths > index.lock >
 * detached HEAD > unborn branch. An operation wins over the detached HEAD and conflicts it causes (a rebase
 * detaches HEAD), so the user is told about the thing they must finish. Recording a turn passes the turn gate
 * instead, where an unborn branch is no blocker (the first turn makes the first version, issue 13) and neither is a
 * held index.lock: the commit path stages into a copy of the index and never needs its lock, and installs the new
 * index once the lock is gone (or leaves that to reconciliation; issue 25). Undo of a first turn passes the undo
 * gate: an unborn branch passes there, but a held index.lock blocks (read-tree writes the index).
 */
export type GateBlocker =
  | 'missing'
  | 'recovery-required'
  | 'restore-in-flight'
  | GitOperation
  | 'unmerged'
  | 'index-locked'
  | 'detached'
  | 'unborn';

/** What the gate needs to know; the full health probe provides it, and so does the commit path's light probe. */
export interface GateFacts {
  exists: boolean;
  operations: readonly GitOperation[];
  unmerged: boolean;
  indexLocked: boolean;
  detached: boolean;
  unborn: boolean;
  head: string | null;
  branch: string | null;
  /** The recovery latch is set (ignored by recovery assessment, which is how recovery ends). */
  recoveryRequired?: boolean;
  /** A restore is in flight in this or another process. */
  restoreInFlight?: boolean;
}

export type GateResult =
  | { ok: true; branch: string; head: string }
  | { ok: false; blocker: GateBlocker; reason: ErrorReason; message: string };

/** How the message ends depends on where the user stands: retrying a command, or checking again in recovery. */
export type GateClosing = 'retry' | 'check' | 'turn-end';

export const RECOVERY_REQUIRED_MESSAGE =
  'Version restore needs attention — Agent Version History could not verify an earlier restore. Resolve the ' +
  'recovery notice (or run `agent-versions recover check`) to continue.';

const OPERATION_NAMES: Record<GitOperation, string> = {
  merge: 'merge',
  rebase: 'rebase',
  am: 'patch application (git am)',
  'cherry-pick': 'cherry-pick',
  revert: 'revert',
  bisect: 'bisect',
};

/** One constant per blocker: what is wrong and the action that helps (the closing clause is added per entry point). */
export const BLOCKER_COPY: Readonly<Record<Exclude<GateBlocker, GitOperation | 'recovery-required'>, string>> = {
  missing: 'The repository folder no longer exists or is no longer a Git repository. Restore it or reopen the project',
  'restore-in-flight': 'Another restore is in progress for this repository. Wait for it to finish',
  unmerged: 'This project has unresolved file conflicts. Resolve them outside VS Code',
  'index-locked':
    'Another Git process is using this repository (index.lock is held). Wait for it to finish, or remove ' +
    '.git/index.lock if no Git process is running',
  detached: 'This project is not on a branch (Git calls this a detached HEAD). Switch to a branch outside VS Code',
  unborn:
    'This repository has no commits yet, so there is no version to return to. The first agent turn makes one ' +
    '(or make a first commit yourself)',
};

const REASONS: Record<Exclude<GateBlocker, GitOperation>, ErrorReason> = {
  missing: 'repository-missing',
  'recovery-required': 'recovery-required',
  'restore-in-flight': 'restore-in-progress',
  unmerged: 'unmerged-entries',
  'index-locked': 'index-locked',
  detached: 'detached-head',
  unborn: 'unborn-branch',
};

const CLOSINGS: Record<GateClosing, string> = {
  retry: ', then try again. Nothing was changed.',
  check: ', then check again.',
  'turn-end': ', then the next turn can be recorded.',
};

/** Whether the blocker is a git operation in progress (merge, rebase, …) rather than a state. Pure. */
export function isGitOperation(blocker: GateBlocker): blocker is GitOperation {
  return blocker in OPERATION_NAMES;
}

/** The error reason a blocker is reported with. Pure. */
export function reasonForBlocker(blocker: GateBlocker): ErrorReason {
  return isGitOperation(blocker) ? 'operation-in-progress' : REASONS[blocker];
}

/** The user-facing sentence for a blocker at an entry point. */
export function blockerMessage(blocker: GateBlocker, closing: GateClosing): string {
  if (blocker === 'recovery-required') return RECOVERY_REQUIRED_MESSAGE;
  const body = isGitOperation(blocker)
    ? `A Git ${OPERATION_NAMES[blocker]} is still in progress. Finish or cancel it outside VS Code`
    : BLOCKER_COPY[blocker];
  return `${body}${CLOSINGS[closing]}`;
}

/**
 * The first blocker in the gate's order, or null; an unborn branch counts only when `unbornBlocks`, a held
 * index.lock only when `indexLockBlocks`. Pure.
 */
function firstBlocker(facts: GateFacts, unbornBlocks: boolean, indexLockBlocks = true): GateBlocker | null {
  if (!facts.exists) return 'missing';
  if (facts.recoveryRequired) return 'recovery-required';
  if (facts.restoreInFlight) return 'restore-in-flight';
  if (facts.operations.length > 0) return facts.operations[0];
  if (facts.unmerged) return 'unmerged';
  if (facts.indexLocked && indexLockBlocks) return 'index-locked';
  if (facts.detached || !facts.branch) return 'detached';
  if (unbornBlocks && (facts.unborn || !facts.head)) return 'unborn';
  return null;
}

function blocked(
  blocker: GateBlocker,
  closing: GateClosing,
): { ok: false; blocker: GateBlocker; reason: ErrorReason; message: string } {
  return { ok: false, blocker, reason: reasonForBlocker(blocker), message: blockerMessage(blocker, closing) };
}

/** The ordered decision; pure. */
export function gate(facts: GateFacts, closing: GateClosing): GateResult {
  const blocker = firstBlocker(facts, true);
  return blocker ? blocked(blocker, closing) : { ok: true, branch: facts.branch!, head: facts.head! };
}

export type TurnGateResult =
  | { ok: true; branch: string; head: string | null }
  | { ok: false; blocker: GateBlocker; reason: ErrorReason; message: string };

/**
 * The gate for recording a turn (begin, the version at its end): an unborn branch passes with `head: null`, and a
 * held index.lock is no blocker (see above).
 */
export function turnGate(facts: GateFacts, closing: GateClosing): TurnGateResult {
  return openBranchGate(facts, closing, false);
}

/** The gate for undoing a turn: an unborn branch passes with `head: null` (a first turn's Undo); index.lock blocks. */
export function undoGate(facts: GateFacts, closing: GateClosing): TurnGateResult {
  return openBranchGate(facts, closing, true);
}

function openBranchGate(facts: GateFacts, closing: GateClosing, indexLockBlocks: boolean): TurnGateResult {
  const blocker = firstBlocker(facts, false, indexLockBlocks);
  return blocker
    ? blocked(blocker, closing)
    : { ok: true, branch: facts.branch!, head: facts.unborn ? null : facts.head };
}

/** The gate's facts from a full health probe. */
export function factsFromHealth(
  health: Omit<RepositoryHealth, 'listed'>,
  extra: Pick<GateFacts, 'recoveryRequired' | 'restoreInFlight'> = {},
): GateFacts {
  return { ...health, unmerged: health.counts.unmerged > 0, ...extra };
}

/** Throws the blocker as an AvhError (details name the blocker) unless the gate lets the caller proceed. */
export function passGate(facts: GateFacts, closing: GateClosing): { branch: string; head: string } {
  const result = gate(facts, closing);
  if (!result.ok) throw gateError(result);
  return { branch: result.branch, head: result.head };
}

/** passGate through the turn gate: `head` is null on an unborn branch. */
export function passTurnGate(facts: GateFacts, closing: GateClosing): { branch: string; head: string | null } {
  const result = turnGate(facts, closing);
  if (!result.ok) throw gateError(result);
  return { branch: result.branch, head: result.head };
}

/** passGate through the undo gate: `head` is null on an unborn branch. */
export function passUndoGate(facts: GateFacts, closing: GateClosing): { branch: string; head: string | null } {
  const result = undoGate(facts, closing);
  if (!result.ok) throw gateError(result);
  return { branch: result.branch, head: result.head };
}

function gateError(result: { blocker: GateBlocker; reason: ErrorReason; message: string }): AvhError {
  return new AvhError(result.reason, result.message, {
    blocker: result.blocker,
    ...(isGitOperation(result.blocker) ? { operation: result.blocker } : {}),
  });
}
