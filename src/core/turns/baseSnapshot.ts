import type { WorkingTreeCommitRequest } from '../git/workingTree';
import type { RepositoryHealth } from '../git/healthProbe';
import { ZERO_OID } from '../git/refUpdate';

/** Private refs holding each turn's base snapshot commit (one per turn begun on a tree that was not clean). */
export const BASE_REF_PREFIX = 'refs/agent-versions/base/';

/** The message of a turn's base snapshot commit (a snapshot beside HEAD, or a first turn's private root commit). */
export function baseSnapshotMessage(turnId: string, chatId: string): string {
  return `Agent Version History base snapshot\n\nAgent-Turn: ${turnId}\nAgent-Chat: ${chatId}\n`;
}

/**
 * The commit request of a turn's base snapshot on a branch with a commit (docs/product-contract.md §4.1): a private ref
 * created at the exact pre-turn state (staged tree included), HEAD, the index and the files left as they are. A commit
 * even when nothing differs from HEAD unless the tree was `clean` (entries status cannot see: issue 25); the snapshot
 * stages exactly the paths the gate's status listed (issue 36: no second look at the whole tree). beginTurn
 * (turnLedger.ts) and the hook fast path (src/cli/hooks/fastHook.ts) make it from here, so the two cannot drift.
 */
export function baseSnapshotRequest(
  turnId: string,
  chatId: string,
  head: string,
  health: Pick<RepositoryHealth, 'clean' | 'listed'>,
): WorkingTreeCommitRequest {
  const { clean } = health;
  return {
    ref: `${BASE_REF_PREFIX}${turnId}`,
    expected: ZERO_OID,
    parent: head,
    always: !clean,
    listed: health.listed,
    message: baseSnapshotMessage(turnId, chatId),
    reflog: 'agent-versions: base snapshot',
    installIndex: false,
  };
}
