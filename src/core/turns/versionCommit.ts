import { type ErrorReason, isAvhError } from '../errors';
import { ZERO_OID } from '../git/refUpdate';
import type { PathFromCommit, WorkingTreeCommitRequest } from '../git/workingTree';
import type { NoVersionReason } from './turnRecords';

/**
 * A completed turn's `[Agent]` version: the commit request and the reason recorded when no version is made. The
 * ledger's end (turnLedger.ts commitTurnVersion) and the hook fast path's (src/cli/hooks/fastHook.ts) take both
 * from here, so the two cannot drift apart.
 */

/** The refusals and failures a version records as its reason, by the error reason that caused them. */
export const NO_VERSION_FOR: Partial<Record<ErrorReason, NoVersionReason>> = {
  'repository-missing': 'repository-missing',
  'restore-in-progress': 'restore-in-progress',
  'operation-in-progress': 'operation-in-progress',
  'unmerged-entries': 'unmerged-entries',
  'index-locked': 'index-locked',
  'detached-head': 'detached-head',
  'unborn-branch': 'unborn-branch',
  'ref-moved': 'ref-moved',
  'ref-update-refused': 'ref-update-refused',
};

/**
 * The reason recorded when the version's commit failed (commitWorkingTree threw): unresolved conflicts and a held
 * index.lock as the gate names them, anything else as its error reason says, else 'git-failed'.
 */
export function versionFailureReason(error: unknown): NoVersionReason {
  if (isAvhError(error, 'unmerged-entries')) return 'unmerged-entries';
  if (isAvhError(error, 'index-locked')) return 'index-locked';
  return (isAvhError(error) && NO_VERSION_FOR[error.reason]) || 'git-failed';
}

/** The turn as its version's commit needs it. */
export interface VersionTurn {
  id: string;
  chatId: string;
  /** agentSubject(prompt): the commit's subject. */
  subject: string;
  /** The turn's base tree when it is no commit's (a snapshot's working-state tree), else null. */
  baseTree: string | null;
}

/**
 * The commit of a completed turn's whole tree on the attached branch at `head` (a branch with a commit), made only
 * when it differs from the turn's base: its base tree, else the base commit's (`baseCommitTree`), else HEAD's.
 */
export function versionCommitRequest(
  turn: VersionTurn,
  at: { branch: string; head: string | null; headTree: string; baseCommitTree?: string },
  fromCommits: readonly PathFromCommit[],
  step: WorkingTreeCommitRequest['step'],
): WorkingTreeCommitRequest {
  return {
    ref: `refs/heads/${at.branch}`,
    expected: at.head ?? ZERO_OID,
    parent: at.head,
    parentTree: at.headTree,
    unchangedTree: turn.baseTree ?? at.baseCommitTree ?? at.headTree,
    message: `${turn.subject}\n\nAgent-Turn: ${turn.id}\nAgent-Chat: ${turn.chatId}\n`,
    reflog: 'agent-versions: agent turn',
    installIndex: true,
    fromCommits,
    step,
  };
}
