import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { RepoContext } from '../context';
import { AvhError, isAvhError } from '../errors';
import { runGit } from '../git/gitRunner';
import { inspectRepositoryHealth, operationsInProgress } from '../git/healthProbe';
import { acquireRepositoryLease } from '../git/repositoryLease';
import { secretsLeftOutOf } from '../git/secretExclusion';
import { compareAndSetRef, createCommit, installIndex, TemporaryIndex, writeWorkingTree } from '../git/workingTree';
import type { TerminalOutcome } from '../outcomes';
import type { SecretFinding } from '../secrets/secretScanner';
import { assertNoRecovery, readRecovery } from '../recovery/recoveryLatch';
import { agentSubject } from './promptSummary';
import { getChat, getTurn, markTurnTerminal, NoVersionReason, openTurnsOfChat, setTurnVersion } from './turnRecords';
import { BeginTurnInput } from './validation';

export const BASE_REF_PREFIX = 'refs/agent-versions/base/';

export interface BeginTurnResult {
  turnId: string;
  /** The exact pre-turn state: HEAD itself when the tree was clean, else a private snapshot commit. */
  baseCommit: string;
  /** New files left out of the base snapshot because they look like secrets (issue 15). */
  excluded: SecretFinding[];
}

/**
 * Persists a new turn and captures its base snapshot (SPEC §4.1). Never touches HEAD, the index or the
 * working tree; writes nothing to git when the tree is clean. Refused while recovery is required.
 */
export async function beginTurn(ctx: RepoContext, input: BeginTurnInput): Promise<BeginTurnResult> {
  await assertNoRecovery(ctx.store);
  const lease = await acquireRepositoryLease(ctx.repo, 'turn', ctx.leaseWaitMs);
  try {
    await assertNoRecovery(ctx.store);
    const health = await inspectRepositoryHealth(ctx.repo);
    if (!health.exists) throw new AvhError('repository-missing', 'The repository no longer exists.');
    if (health.unborn || !health.head) {
      throw new AvhError('unborn-branch', 'This repository has no commits yet. Make a first commit, then agent turns can be recorded.');
    }
    if (health.detached || !health.branch) {
      throw new AvhError('detached-head', 'HEAD is detached. Check out a branch so agent turns can be recorded as versions on it.');
    }
    if (health.counts.unmerged > 0) {
      throw new AvhError('unmerged-entries', 'The repository has unresolved merge conflicts. Resolve them, then start the turn again.');
    }
    if (health.operations.length > 0) {
      throw new AvhError('operation-in-progress', `A git ${health.operations[0]} is in progress. Finish or cancel it, then start the turn again.`, { operation: health.operations[0] });
    }
    const turnId = crypto.randomUUID();
    const now = Date.now();
    const branch = health.branch;
    await ctx.store.transaction((tx) => {
      const chat = getChat(tx, input.chatId);
      if (!chat) {
        tx.run('INSERT INTO chats (id, title, agent, branch, base_branch, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
          [input.chatId, input.chatTitle ?? null, input.agent ?? null, branch, branch, now, now]);
      } else {
        tx.run('UPDATE chats SET title = COALESCE(?, title), agent = COALESCE(?, agent), updated_at = ? WHERE id = ?',
          [input.chatTitle ?? null, input.agent ?? null, now, input.chatId]);
      }
      const seq = (tx.get<{ seq: number | null }>('SELECT MAX(seq) AS seq FROM turns WHERE chat_id = ?', [input.chatId])?.seq ?? 0) + 1;
      tx.run(`INSERT INTO turns (id, chat_id, seq, prompt, agent, recovery, branch, base_head, created_at)
              VALUES (?, ?, ?, ?, ?, 'accepted', ?, ?, ?)`,
      [turnId, input.chatId, seq, input.prompt, input.agent ?? null, branch, health.head, now]);
    });
    let baseCommit = health.head;
    let baseTree: string | null = null;
    let excluded: SecretFinding[] = [];
    if (!health.clean) {
      const index = TemporaryIndex.create(ctx.repo);
      try {
        baseTree = await writeWorkingTree(ctx.repo, index);
        excluded = secretsLeftOutOf(index);
      } finally {
        index.dispose();
      }
      baseCommit = await createCommit(ctx.repo, {
        tree: baseTree,
        parents: [health.head],
        message: `Agent Version History base snapshot\n\nAgent-Turn: ${turnId}\nAgent-Chat: ${input.chatId}\n`,
      });
      await runGit(ctx.repo.root, ['update-ref', '-m', 'agent-versions: base snapshot', `${BASE_REF_PREFIX}${turnId}`, baseCommit, '0'.repeat(40)]);
    }
    await ctx.store.transaction((tx) => {
      tx.run("UPDATE turns SET recovery = 'running', base_commit = ?, base_tree = ? WHERE id = ?", [baseCommit, baseTree, turnId]);
    });
    ctx.log.info('turn.begin', { turn: turnId, snapshot: health.clean ? 'head' : 'commit', dirty: health.counts.staged + health.counts.unstaged + health.counts.untracked });
    return { turnId, baseCommit, excluded };
  } finally {
    lease.release();
  }
}

export interface EndTurnResult {
  turnId: string;
  outcome: TerminalOutcome;
  /** The `[Agent]` version commit, or null when none was made. */
  version: string | null;
  /** Why no version was made, when one was expected. */
  reason?: NoVersionReason;
  /** A user-facing explanation when the reason is worth telling. */
  message?: string;
  /** New files left out of the version because they look like secrets (issue 15); they stay in the working tree. */
  excluded: SecretFinding[];
}

/**
 * Records the turn's terminal outcome in one durable write, then (completed only) commits the whole tree as
 * one `[Agent]` version when it differs from the base. Ending an unknown or already-ended turn changes nothing.
 */
export async function endTurn(ctx: RepoContext, turnId: string, outcome: TerminalOutcome): Promise<EndTurnResult> {
  const lease = await acquireRepositoryLease(ctx.repo, 'turn', ctx.leaseWaitMs);
  try {
    return await endTurnUnderLease(ctx, turnId, outcome);
  } finally {
    lease.release();
  }
}

/** endTurn for a caller that already holds the repository lease (Undo ends a running turn this way). */
export async function endTurnUnderLease(ctx: RepoContext, turnId: string, outcome: TerminalOutcome): Promise<EndTurnResult> {
  const ended = Date.now();
  const { turn, recovery } = await ctx.store.transaction((tx) => {
    const row = getTurn(tx, turnId);
    if (!row) throw new AvhError('turn-unknown', 'No turn with this id exists in this repository.');
    if (row.recovery === 'terminal') {
      throw new AvhError('turn-already-ended', `This turn already ended (${row.terminal_outcome ?? 'outcome unknown'}); nothing was changed.`);
    }
    // While recovery is required the repository's state is unverified: record the outcome, commit nothing.
    const latched = readRecovery(tx) !== null;
    markTurnTerminal(tx, turnId, outcome, outcome !== 'completed' ? 'not-completed' : latched ? 'recovery-required' : 'pending', ended);
    return { turn: row, recovery: latched };
  });
  ctx.log.info('turn.end', { turn: turnId, outcome });
  if (outcome !== 'completed') return { turnId, outcome, version: null, excluded: [] };
  if (recovery) return { turnId, outcome, version: null, reason: 'recovery-required', message: REASON_COPY['recovery-required'], excluded: [] };
  const result = await commitTurnVersion(ctx, turnId, turn.chat_id, turn.prompt, turn.base_tree, turn.base_commit);
  await ctx.store.transaction((tx) => setTurnVersion(tx, turnId, result.version, result.reason ?? null));
  ctx.log.info('turn.version', { turn: turnId, made: result.version !== null, reason: result.reason, excluded: result.excluded?.length });
  return { turnId, outcome, excluded: [], ...result };
}

const REASON_COPY: Partial<Record<NoVersionReason, string>> = {
  'recovery-required': 'No version was made: Version History needs attention (an earlier restore could not be verified). The changes stay in the working tree; resolve the recovery notice to continue.',
  'detached-head': 'No version was made: HEAD is detached. The changes stay in the working tree.',
  'operation-in-progress': 'No version was made: a git operation is in progress. The changes stay in the working tree.',
  'unmerged-entries': 'No version was made: the repository has unresolved merge conflicts. The changes stay in the working tree.',
  'index-locked': 'No version was made: another git process holds index.lock. The changes stay in the working tree.',
  'ref-moved': 'No version was made: the branch moved while the version was being recorded. The changes stay in the working tree.',
  'git-failed': 'No version was made: git failed while recording it. The changes stay in the working tree.',
  'unborn-branch': 'No version was made: the branch has no commits. The changes stay in the working tree.',
};

async function commitTurnVersion(
  ctx: RepoContext,
  turnId: string,
  chatId: string,
  prompt: string,
  baseTree: string | null,
  baseCommit: string | null,
): Promise<{ version: string | null; reason?: NoVersionReason; message?: string; excluded?: SecretFinding[] }> {
  const skip = (reason: NoVersionReason) => ({ version: null, reason, message: REASON_COPY[reason] });
  const { repo } = ctx;
  const headRef = readSymbolicHead(repo.gitDir);
  if (!headRef) return skip('detached-head');
  if (operationsInProgress(repo.gitDir).length > 0) return skip('operation-in-progress');
  if (fs.existsSync(path.join(repo.gitDir, 'index.lock'))) return skip('index-locked');
  try {
    let head: string | undefined;
    let parsedBaseTree: string | undefined;
    try {
      const revs = [headRef, ...(baseTree === null && baseCommit ? [`${baseCommit}^{tree}`] : [])];
      [head, parsedBaseTree] = (await runGit(repo.root, ['rev-parse', ...revs])).stdout.trim().split('\n');
    } catch {
      return skip('unborn-branch');
    }
    if (!head) return skip('unborn-branch');
    const { stdout: unmerged } = await runGit(repo.root, ['ls-files', '--unmerged', '-z']);
    if (unmerged.length > 0) return skip('unmerged-entries');
    const index = TemporaryIndex.create(repo);
    try {
      const tree = await writeWorkingTree(repo, index);
      const excluded = secretsLeftOutOf(index);
      if (tree === (baseTree ?? parsedBaseTree)) return { version: null, reason: 'no-changes', excluded };
      const message = `${agentSubject(prompt)}\n\nAgent-Turn: ${turnId}\nAgent-Chat: ${chatId}\n`;
      const commit = await createCommit(repo, { tree, parents: [head], message });
      await compareAndSetRef(repo, headRef, commit, head, 'agent-versions: agent turn');
      if (!installIndex(repo, index)) {
        await runGit(repo.root, ['reset', '-q']).catch(() => ctx.log.warn('turn.index-refresh-failed', { turn: turnId }));
      }
      return { version: commit, excluded };
    } finally {
      index.dispose();
    }
  } catch (error) {
    if (isAvhError(error, 'ref-moved')) return skip('ref-moved');
    if (isAvhError(error, 'index-locked')) return skip('index-locked');
    if (isAvhError(error, 'unmerged-entries')) return skip('unmerged-entries');
    ctx.log.error('turn.version-failed', { turn: turnId, reason: isAvhError(error) ? error.reason : 'unexpected' });
    return skip('git-failed');
  }
}

/** The full ref HEAD points at (`refs/heads/x`), read from the git dir's HEAD file; null when detached. */
export function readSymbolicHead(gitDir: string): string | null {
  try {
    const content = fs.readFileSync(path.join(gitDir, 'HEAD'), 'utf8').trim();
    const match = /^ref: (refs\/heads\/.+)$/.exec(content);
    return match ? match[1] : null;
  } catch {
    return null;
  }
}

/** Ends every still-running turn of a chat as cancelled (the Claude Code hook sends no Stop on interrupt). */
export async function cancelOpenTurnsOfChat(ctx: RepoContext, chatId: string): Promise<string[]> {
  const open = await ctx.store.read((r) => openTurnsOfChat(r, chatId));
  const ended: string[] = [];
  for (const turn of open) {
    try {
      await endTurn(ctx, turn.id, 'cancelled');
      ended.push(turn.id);
    } catch (error) {
      if (!isAvhError(error, 'turn-already-ended')) throw error;
    }
  }
  return ended;
}
