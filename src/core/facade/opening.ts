import type { RepoContext } from '../context';
import type { GitRepository } from '../git/repository';
import { EventLog, silentLog } from '../log';
import { setRecovery } from '../operations/recoveryLatch';
import { settleChatContinuations } from '../chats/chatContinuation';
import { reconcileOperations, settleUnderLease } from '../recovery/reconciliation';
import { attachSecretChoices } from '../secrets/secretChoices';
import { DurableStore } from '../store/durableStore';
import { rebuildFromTrailers } from '../turns/rebuildFromTrailers';
import { settlePendingTurns } from '../turns/turnLedger';

export interface OpenOptions {
  log?: EventLog;
  /** How long turns and restores wait for another process's repository lease (default 10 s). */
  leaseWaitMs?: number;
}

/** Something the user must be told once after opening (the CLI prints it; the extension shows a warning). */
export interface StartupNotice {
  kind: 'state-rebuilt';
  message: string;
  movedTo: string;
  turnsRecovered: number;
}

/**
 * Recovery latch reason after a damaged state file was rebuilt: what it held (a latch, a restore in flight) is unknown.
 */
export const STATE_REBUILT_REASON = 'state-rebuilt';

/**
 * Opens a repository's store and context for the façade (VersionHistory.openRepository): rebuilds a quarantined
 * store from commit trailers with the recovery latch set, then settles what a crashed process left unfinished.
 */
export async function openContext(
  repo: GitRepository,
  options: OpenOptions,
): Promise<{ ctx: RepoContext; notices: StartupNotice[] }> {
  const log = options.log ?? silentLog;
  const { store, quarantined } = await DurableStore.open(repo.stateDir);
  const ctx: RepoContext = { repo, store, log, leaseWaitMs: options.leaseWaitMs ?? 10_000, settle: settleUnderLease };
  attachSecretChoices(ctx);
  const notices: StartupNotice[] = [];
  if (quarantined) {
    const turnsRecovered = await rebuildFromTrailers(ctx);
    // Fail closed: the damaged file may have held a recovery latch or a restore in flight, and the rebuilt
    // store cannot know. The repository is checked (recover check / Use current version) before any restore.
    await store.transaction((tx) => setRecovery(tx, null, STATE_REBUILT_REASON, null, Date.now()));
    log.warn('store.quarantined', { reason: quarantined.reason, turnsRecovered });
    notices.push({
      kind: 'state-rebuilt',
      movedTo: quarantined.movedTo,
      turnsRecovered,
      message:
        `Agent Version History found its state file damaged, moved it aside (${quarantined.movedTo}) and ` +
        `rebuilt ${turnsRecovered} turn(s) from commit trailers. Check the repository before restoring (Use ` +
        `current version, or \`agent-versions recover check\`).`,
    });
  }
  // Every open (each CLI command, each activation) settles a restore that a crashed process left unfinished.
  await reconcileOperations(ctx);
  // ...and a turn a crashed process left between "completed" and its commit.
  await settlePendingTurns(ctx);
  // ...and a chat continuation a crashed process left between its new branch and the chat's update.
  await settleChatContinuations(ctx);
  return { ctx, notices };
}
