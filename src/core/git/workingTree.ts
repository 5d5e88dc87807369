import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { AvhError } from '../errors';
import { GitCommandError, runGit } from './gitRunner';
import { currentLockLiveness } from '../store/pidLock';
import { GitRepository } from './repository';
import type { SecretFinding } from '../secrets/secretScanner';
import { excludeLargeFiles } from './heavyFolders';
import { addedPaths, excludeNewSecrets } from './secretExclusion';

/** Config for every commit we make: no hooks, no signing (so no pinentry), and durable objects when asked. */
function commitConfig(durable: boolean): string[] {
  const args = ['-c', 'core.hooksPath=/dev/null', '-c', 'commit.gpgSign=false'];
  if (durable) args.push('-c', 'core.fsync=committed,index', '-c', 'core.fsyncMethod=fsync');
  return args;
}

const FALLBACK_IDENTITY = {
  GIT_AUTHOR_NAME: 'Agent Version History',
  GIT_AUTHOR_EMAIL: 'agent-versions@localhost',
  GIT_COMMITTER_NAME: 'Agent Version History',
  GIT_COMMITTER_EMAIL: 'agent-versions@localhost',
};

/** Temporary index files are named `index-<pid>-<start time or empty>-<uuid>` so leftovers of a dead process can be told apart. */
const TEMP_INDEX_PREFIX = 'index-';
const TEMP_INDEX_NAME = /^index-(\d+)-(\d*)-[0-9a-f-]{36}(\.lock)?$/;

/** `<pid>-<start time>` of this process as the lock liveness provider sees it (start time empty where unknown). */
function ownIncarnation(): string {
  return `${process.pid}-${currentLockLiveness().startTime(process.pid) ?? ''}`;
}

/**
 * Whether the process recorded as `pid` (with start time `start`, empty when unknown) is certainly gone, judged by
 * the same liveness provider as our lock files: the pid no longer exists, or it now names a process that started
 * at another time. A pid that exists with no start time to compare is alive (never guessed dead).
 */
export function recordedProcessGone(pid: number, start: string): boolean {
  const liveness = currentLockLiveness();
  if (pid === process.pid) return start !== '' && String(liveness.startTime(pid) ?? start) !== start;
  if (!liveness.pidExists(pid)) return true;
  if (start === '') return false;
  const now = liveness.startTime(pid);
  return now !== null && String(now) !== start;
}

/**
 * Housekeeping after a crash: temporary index copies (and their git locks) in `<stateDir>/tmp` whose creating
 * process is gone. Never touches one of a live process (its commit path may be using it). Returns how many it removed.
 */
export function removeOrphanedTemporaryIndexes(repo: GitRepository): number {
  const dir = path.join(repo.stateDir, 'tmp');
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return 0;
  }
  let removed = 0;
  for (const name of names) {
    const match = TEMP_INDEX_NAME.exec(name);
    if (!match || !recordedProcessGone(Number(match[1]), match[2])) continue;
    fs.rmSync(path.join(dir, name), { force: true });
    removed++;
  }
  return removed;
}

/** A temporary index beside the real one, seeded from a copy of it (keeping its mtime, so git's racy-entry checks stay right). */
export class TemporaryIndex {
  private constructor(
    readonly file: string,
    readonly seededFrom: fs.BigIntStats | null,
  ) {}

  static create(repo: GitRepository): TemporaryIndex {
    const dir = path.join(repo.stateDir, 'tmp');
    fs.mkdirSync(dir, { recursive: true });
    const file = path.join(dir, `${TEMP_INDEX_PREFIX}${ownIncarnation()}-${crypto.randomUUID()}`);
    const real = path.join(repo.gitDir, 'index');
    let stat: fs.BigIntStats | null = null;
    try {
      stat = fs.statSync(real, { bigint: true });
      fs.copyFileSync(real, file);
      // Never newer than the original: an index newer than a same-second edit would hide that edit from git.
      const mtime = Number(stat.mtimeNs / 1000n) / 1e6 - 1e-6;
      const atime = Number(stat.atimeNs / 1000n) / 1e6;
      fs.utimesSync(file, atime, mtime);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      stat = null; // no index yet (fresh repository): git starts from an empty one
    }
    return new TemporaryIndex(file, stat);
  }

  /** A second copy of the same seed (same bytes and times), for a git command that must not share this one's file. */
  twin(repo: GitRepository): TemporaryIndex {
    const file = path.join(repo.stateDir, 'tmp', `${TEMP_INDEX_PREFIX}${ownIncarnation()}-${crypto.randomUUID()}`);
    if (this.seededFrom) {
      fs.copyFileSync(this.file, file);
      const stat = fs.statSync(this.file, { bigint: true });
      fs.utimesSync(file, Number(stat.atimeNs / 1000n) / 1e6, Number(stat.mtimeNs / 1000n) / 1e6);
    }
    return new TemporaryIndex(file, this.seededFrom);
  }

  get env(): Record<string, string> {
    return { GIT_INDEX_FILE: this.file };
  }

  dispose(): void {
    fs.rmSync(this.file, { force: true });
    fs.rmSync(`${this.file}.lock`, { force: true });
  }
}

export interface WorkingTreeSnapshot {
  tree: string;
  /** Folders with their own `.git` (not registered submodules) that were left out instead of becoming gitlinks. */
  nested: string[];
  /** New files left out because they look like secrets (they stay in the working tree, excluded in info/exclude). */
  excluded: SecretFinding[];
  /** New files larger than 50 MB left out (they stay in the working tree, excluded in info/exclude). */
  large: string[];
}

const EMBEDDED_REPO_WARNING = /^warning: adding embedded git repository: (.+)$/gm;

/**
 * Stages the whole user-visible working state (HEAD's tree plus every modified, deleted and untracked-not-ignored
 * file) into `index` and writes its tree. Nested repositories that git would record as gitlinks are left out.
 * The single step every version, snapshot and preservation commit goes through. Never touches HEAD, the user's
 * index or the working tree.
 */
export async function writeWorkingTree(repo: GitRepository, index: TemporaryIndex): Promise<WorkingTreeSnapshot> {
  const added = await runGit(repo.root, ['-c', 'advice.addEmbeddedRepo=false', 'add', '-A', '--verbose', '--', '.'], {
    env: index.env,
  });
  const nested = [...added.stderr.matchAll(EMBEDDED_REPO_WARNING)].map((m) => m[1]);
  if (nested.length > 0) {
    await runGit(repo.root, ['update-index', '--force-remove', '-z', '--stdin'], {
      env: index.env,
      input: nested.join('\0'),
    });
  }
  // New files that look like secrets stay out of every version (issue 15).
  const excluded = await excludeNewSecrets(repo, index, added.stdout);
  // ...and so do new files too large for a version (issue 13).
  const large = await excludeLargeFiles(repo, index, addedPaths(added.stdout));
  const { stdout } = await runGit(repo.root, ['write-tree'], { env: index.env });
  return { tree: stdout.trim(), nested, excluded, large };
}

export interface CommitSpec {
  tree: string;
  parents: readonly string[];
  message: string;
  /** fsync objects and refs: for commits that preserve user work before a destructive step. */
  durable?: boolean;
  /** Fixed author/committer date (seconds) so re-running an effect makes the same commit object. */
  date?: number;
}

/** Creates a commit object (no ref moves, no hooks, no signing, no prompts) and returns its oid. */
export async function createCommit(repo: GitRepository, spec: CommitSpec): Promise<string> {
  const args = [...commitConfig(spec.durable ?? false), 'commit-tree', '--no-gpg-sign', spec.tree];
  for (const parent of spec.parents) args.push('-p', parent);
  const env: Record<string, string> = {};
  if (spec.date !== undefined) {
    env.GIT_AUTHOR_DATE = `@${spec.date} +0000`;
    env.GIT_COMMITTER_DATE = `@${spec.date} +0000`;
  }
  try {
    const { stdout } = await runGit(repo.root, args, { input: spec.message, env });
    return stdout.trim();
  } catch (error) {
    // No identity configured: record the commit under the product's own name rather than fail or prompt.
    if (
      error instanceof GitCommandError &&
      /tell me who you are|empty ident|unable to auto-detect email/i.test(error.stderr)
    ) {
      const { stdout } = await runGit(repo.root, args, { input: spec.message, env: { ...env, ...FALLBACK_IDENTITY } });
      return stdout.trim();
    }
    throw error;
  }
}

export const ZERO_OID = '0'.repeat(40);

/** The empty tree's oid in this repository's hash (written, so a commit of it always finds the object). */
export async function emptyTree(repo: GitRepository): Promise<string> {
  return (await runGit(repo.root, ['hash-object', '-t', 'tree', '-w', '--stdin'], { input: '' })).stdout.trim();
}
/** Private refs keeping a staged tree reachable, one per commit that preserved it (named after that commit). */
export const STAGED_REF_PREFIX = 'refs/agent-versions/staged/';
export const STAGED_SUBJECT = 'Agent Version History: staged changes';

/** The current value of `ref`, or null when it does not exist. Read-only. */
export async function readRef(repo: GitRepository, ref: string): Promise<string | null> {
  const { stdout, code } = await runGit(repo.root, ['rev-parse', '--verify', '-q', ref], { okCodes: [1] });
  return code === 0 ? stdout.trim() || null : null;
}

/**
 * Moves `ref` from `expected` to `next` atomically (and, in the same ref transaction, `extra` refs); the one
 * compare-and-set every ref move of ours goes through. Failure contract: already at `next` (a re-run) is success;
 * moved by someone else is 'ref-moved'; still at `expected` means git refused (a reference-transaction hook, a
 * full disk): 'ref-update-refused'. Each failure leaves every ref as it was.
 */
export async function compareAndSetRef(
  repo: GitRepository,
  ref: string,
  next: string,
  expected: string,
  reflog: string,
  durable = false,
  extra: readonly { ref: string; oid: string }[] = [],
): Promise<void> {
  const args = [
    ...(durable ? ['-c', 'core.fsync=reference', '-c', 'core.fsyncMethod=fsync'] : []),
    'update-ref',
    '-m',
    reflog,
    '--stdin',
  ];
  const input = [
    'start',
    `update ${ref} ${next} ${expected}`,
    ...extra.map((e) => `update ${e.ref} ${e.oid}`),
    'prepare',
    'commit',
    '',
  ].join('\n');
  try {
    await runGit(repo.root, args, { input });
  } catch (error) {
    if (!(error instanceof GitCommandError) || error.reason === 'index-locked') throw error;
    const now = await readRef(repo, ref).catch(() => undefined);
    if (now === next) return;
    if (error.reason === 'ref-locked') throw error;
    if (now !== undefined && now !== (expected === ZERO_OID ? null : expected)) {
      throw new AvhError(
        'ref-moved',
        'The branch moved while Agent Version History was updating it; nothing was changed. Try again.',
        {},
        { cause: error },
      );
    }
    throw new AvhError(
      'ref-update-refused',
      'Git refused to move the branch (a reference-transaction hook, a full disk or a permissions problem); nothing was changed. Fix the cause, then try again.',
      {},
      { cause: error },
    );
  }
}

export interface WorkingTreeCommitRequest {
  /** The ref the commit goes on: the attached branch, or a private ref (created when `expected` is ZERO_OID). */
  ref: string;
  expected: string;
  /** The commit's parent: the HEAD the working tree was compared with; null for a root commit (an unborn branch). */
  parent: string | null;
  parentTree?: string;
  /** No commit when the working tree's tree equals this (default: the parent's tree). */
  unchangedTree?: string;
  /** Make a commit even when nothing differs from `unchangedTree` (base snapshots of an index-only change). */
  always?: boolean;
  message: string;
  reflog: string;
  durable?: boolean;
  date?: number;
  /** Make the new tree the repository's index after the ref moved (versions on the branch). */
  installIndex: boolean;
  /** Test crash points between the steps. */
  step?: (name: 'after-write-tree' | 'after-commit' | 'after-update-ref') => void;
}

export interface WorkingTreeCommitResult {
  /** The new commit (now at `ref`), or null when the tree was unchanged and nothing moved. */
  commit: string | null;
  tree: string;
  /** The staged tree kept reachable (commit under STAGED_REF_PREFIX), when the index differed from HEAD and the working tree. */
  staged: string | null;
  nested: string[];
  excluded: SecretFinding[];
  large: string[];
  /** False when the index could not be made the new tree now (recorded for reconciliation to repair). */
  indexInstalled: boolean;
}

/**
 * The one commit path: temporary index → stage everything → write-tree → commit-tree → compare-and-set the ref →
 * install the index. Failure contract: any failure before the ref moved throws and nothing moved (no version);
 * once the ref moved the result always names the commit; a HEAD that moved while the index could not follow is
 * repaired now or recorded for reconciliation, never left for the user to commit a reversal. What the user had
 * staged (an index differing from HEAD and from the working tree) stays reachable through a private ref and an
 * `Agent-Staged` trailer. Never touches the working tree.
 */
export async function commitWorkingTree(
  repo: GitRepository,
  request: WorkingTreeCommitRequest,
): Promise<WorkingTreeCommitResult> {
  const index = TemporaryIndex.create(repo);
  // The index as the user left it is written as a tree from its own copy, side by side with staging everything.
  const asLeft = index.twin(repo);
  try {
    const [left, written] = await Promise.allSettled([writeIndexTree(repo, asLeft), writeWorkingTree(repo, index)]);
    if (left.status === 'rejected') throw left.reason;
    if (written.status === 'rejected') throw written.reason;
    const indexTree = left.value;
    const { tree, nested, excluded, large } = written.value;
    request.step?.('after-write-tree');
    const parentTree =
      request.parentTree ??
      (request.parent === null
        ? await emptyTree(repo)
        : (await runGit(repo.root, ['rev-parse', `${request.parent}^{tree}`])).stdout.trim());
    if (tree === (request.unchangedTree ?? parentTree) && !request.always) {
      return { commit: null, tree, staged: null, nested, excluded, large, indexInstalled: false };
    }
    const parents = request.parent === null ? [] : [request.parent];
    let staged: string | null = null;
    if (indexTree !== parentTree && indexTree !== tree) {
      staged = await createCommit(repo, {
        tree: indexTree,
        parents,
        message: `${STAGED_SUBJECT}\n`,
        durable: request.durable,
        date: request.date,
      });
    }
    const message = staged ? withTrailer(request.message, `Agent-Staged: ${staged}`) : request.message;
    const commit = await createCommit(repo, { tree, parents, message, durable: request.durable, date: request.date });
    request.step?.('after-commit');
    // Intent first: a crash between the ref move and the index swap leaves a marker reconciliation acts on.
    if (request.installIndex) recordIndexRepair(repo, request.ref, commit);
    try {
      await compareAndSetRef(
        repo,
        request.ref,
        commit,
        request.expected,
        request.reflog,
        request.durable,
        staged ? [{ ref: `${STAGED_REF_PREFIX}${commit}`, oid: staged }] : [],
      );
    } catch (error) {
      if (request.installIndex) clearIndexRepair(repo);
      throw error;
    }
    request.step?.('after-update-ref');
    const indexInstalled = request.installIndex ? await followIndex(repo, index, request.durable ?? false) : false;
    return { commit, tree, staged, nested, excluded, large, indexInstalled };
  } finally {
    asLeft.dispose();
    index.dispose();
  }
}

export const FIRST_BASE_SUBJECT = '[Base] Files before the first agent turn';

export interface FirstBase extends WorkingTreeSnapshot {
  /** The commit Undo of the first turn returns to. */
  commit: string;
  /** Whether it is the branch's new root commit (the folder held files), or a private root commit of the empty tree. */
  onBranch: boolean;
}

/**
 * The base of the first turn on an unborn branch (issue 13), through the one commit path. When the folder holds
 * files, they become the branch's root commit `[Base] Files before the first agent turn` (durable; the index
 * follows, so `git status` stays as it was): the user's files are in history before the agent touches anything.
 * When it holds nothing, the branch stays unborn (the turn's `[Agent]` commit will be its root) and a private root
 * commit of the empty tree under `privateRef` is the base Undo returns to. Never touches the working tree.
 */
export async function commitFirstBase(
  repo: GitRepository,
  branch: string,
  privateRef: string,
  privateMessage: string,
): Promise<FirstBase> {
  const onBranch = await commitWorkingTree(repo, {
    ref: `refs/heads/${branch}`,
    expected: ZERO_OID,
    parent: null,
    message: `${FIRST_BASE_SUBJECT}\n`,
    reflog: 'agent-versions: files before the first agent turn',
    durable: true,
    installIndex: true,
  });
  if (onBranch.commit) return { ...onBranch, commit: onBranch.commit, onBranch: true };
  const commit = await createCommit(repo, { tree: onBranch.tree, parents: [], message: privateMessage });
  await compareAndSetRef(repo, privateRef, commit, ZERO_OID, 'agent-versions: base snapshot');
  return { ...onBranch, commit, onBranch: false };
}

/** The tree of the index as the user left it (a copy of it); unmerged entries fail with 'unmerged-entries'. */
async function writeIndexTree(repo: GitRepository, index: TemporaryIndex): Promise<string> {
  try {
    return (await runGit(repo.root, ['write-tree'], { env: index.env })).stdout.trim();
  } catch (error) {
    if (error instanceof GitCommandError && /unmerged|not able to write tree/i.test(error.stderr)) {
      throw new AvhError('unmerged-entries', 'The repository has unresolved merge conflicts.', {}, { cause: error });
    }
    throw error;
  }
}

function withTrailer(message: string, trailer: string): string {
  const body = message.replace(/\s+$/, '');
  const last = body.split('\n\n').pop() ?? '';
  const hasTrailers = body.includes('\n\n') && last.split('\n').every((line) => /^[A-Za-z][A-Za-z-]*: /.test(line));
  return `${body}${hasTrailers ? '\n' : '\n\n'}${trailer}\n`;
}

const INDEX_REPAIR_FILE = 'index-repair';

function recordIndexRepair(repo: GitRepository, ref: string, commit: string): void {
  fs.mkdirSync(repo.stateDir, { recursive: true });
  fs.writeFileSync(path.join(repo.stateDir, INDEX_REPAIR_FILE), `${ref} ${commit}\n`);
}

function clearIndexRepair(repo: GitRepository): void {
  fs.rmSync(path.join(repo.stateDir, INDEX_REPAIR_FILE), { force: true });
}

/**
 * After the branch moved: the index becomes the new commit's tree. When it cannot be swapped in (index.lock
 * held, or the index changed meanwhile), git rebuilds it from HEAD (`reset -q`: staging only, files kept); when
 * even that fails, the marker stays for reconciliation. Never throws: the commit stands either way.
 */
async function followIndex(repo: GitRepository, index: TemporaryIndex, durable: boolean): Promise<boolean> {
  try {
    if (!installIndex(repo, index, durable)) await runGit(repo.root, ['reset', '-q']);
    clearIndexRepair(repo);
    return true;
  } catch {
    return false;
  }
}

/** Whether a commit path left an index repair for reconciliation (a marker file; no git process). */
export function indexRepairPending(repo: GitRepository): boolean {
  return fs.existsSync(path.join(repo.stateDir, INDEX_REPAIR_FILE));
}

/**
 * Reconciliation: finishes an index repair a failed or crashed commit path left recorded. Only while the ref
 * still holds that commit and HEAD is on it; otherwise the user moved on and the marker is dropped. Returns
 * whether it repaired the index.
 */
export async function repairRecordedIndex(repo: GitRepository): Promise<boolean> {
  const marker = path.join(repo.stateDir, INDEX_REPAIR_FILE);
  let text: string;
  try {
    text = fs.readFileSync(marker, 'utf8');
  } catch {
    return false;
  }
  const [ref, commit] = text.trim().split(' ');
  const onIt = ref !== undefined && (await readRef(repo, 'HEAD')) === commit && (await readRef(repo, ref)) === commit;
  if (onIt) await runGit(repo.root, ['reset', '-q']);
  fs.rmSync(marker, { force: true });
  return onIt;
}

/**
 * Makes `index` the repository's index, under git's own index.lock protocol, but only if the real index is
 * unchanged since `index` was copied from it; otherwise the user's index is left for git to refresh.
 * Returns false when the lock was held or the index changed (the commit stands; only staging info differs).
 */
export function installIndex(repo: GitRepository, index: TemporaryIndex, durable = false): boolean {
  const real = path.join(repo.gitDir, 'index');
  const lock = `${real}.lock`;
  let fd: number;
  try {
    fd = fs.openSync(lock, 'wx');
  } catch {
    return false;
  }
  try {
    // Name ourselves in the lock so a crash here leaves a lock that clearOwnStaleIndexLock can prove is ours.
    fs.writeSync(fd, `${INDEX_LOCK_MARKER}${process.pid}:${currentLockLiveness().startTime(process.pid) ?? ''}\n`);
    const now = statOrNull(real);
    const before = index.seededFrom;
    const unchanged =
      before === null
        ? now === null
        : now !== null && now.ino === before.ino && now.size === before.size && now.mtimeNs === before.mtimeNs;
    if (!unchanged) return false;
    if (durable) {
      const tfd = fs.openSync(index.file, 'r');
      try {
        fs.fsyncSync(tfd);
      } finally {
        fs.closeSync(tfd);
      }
    }
    fs.renameSync(index.file, real);
    return true;
  } finally {
    fs.closeSync(fd);
    fs.rmSync(lock, { force: true });
  }
}

const INDEX_LOCK_MARKER = 'agent-versions:';

/**
 * Removes `.git/index.lock` only when it is one that installIndex created and its process is certainly gone (a
 * SIGKILL in that instant). Any other index.lock belongs to git or another tool and is left alone. Returns whether it removed one.
 */
export function clearOwnStaleIndexLock(repo: GitRepository): boolean {
  const lock = path.join(repo.gitDir, 'index.lock');
  let text: string;
  try {
    text = fs.readFileSync(lock, 'utf8');
  } catch {
    return false;
  }
  const match = new RegExp(`^${INDEX_LOCK_MARKER}(\\d+):(\\d*)\n$`).exec(text);
  if (!match) return false;
  // Judged by the lock liveness provider: a holder whose start time is unknown (off Linux) is alive while its pid exists.
  if (!recordedProcessGone(Number(match[1]), match[2])) return false;
  fs.rmSync(lock, { force: true });
  return true;
}

function statOrNull(p: string): fs.BigIntStats | null {
  try {
    return fs.statSync(p, { bigint: true });
  } catch {
    return null;
  }
}
