import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { AvhError } from '../errors';
import { GitCommandError, runGit } from './gitRunner';
import { processStartTime } from '../store/pidLock';
import { GitRepository } from './repository';
import { excludeNewSecrets } from './secretExclusion';

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

/** A temporary index beside the real one, seeded from a copy of it (keeping its mtime, so git's racy-entry checks stay right). */
export class TemporaryIndex {
  private constructor(readonly file: string, readonly seededFrom: fs.BigIntStats | null) {}

  static create(repo: GitRepository): TemporaryIndex {
    const dir = path.join(repo.stateDir, 'tmp');
    fs.mkdirSync(dir, { recursive: true });
    const file = path.join(dir, `index-${process.pid}-${crypto.randomUUID()}`);
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

  get env(): Record<string, string> {
    return { GIT_INDEX_FILE: this.file };
  }

  dispose(): void {
    fs.rmSync(this.file, { force: true });
    fs.rmSync(`${this.file}.lock`, { force: true });
  }
}

/**
 * Writes a tree object of the whole user-visible working state (HEAD's tree plus every modified, deleted and
 * untracked-not-ignored file) through `index`. Never touches HEAD, the user's index or the working tree.
 */
export async function writeWorkingTree(repo: GitRepository, index: TemporaryIndex): Promise<string> {
  const added = await runGit(repo.root, ['add', '-A', '--verbose', '--', '.'], { env: index.env });
  await excludeNewSecrets(repo, index, added.stdout); // issue 15: new files that look like secrets stay out of every version
  const { stdout } = await runGit(repo.root, ['write-tree'], { env: index.env });
  return stdout.trim();
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
    if (error instanceof GitCommandError && /tell me who you are|empty ident|unable to auto-detect email/i.test(error.stderr)) {
      const { stdout } = await runGit(repo.root, args, { input: spec.message, env: { ...env, ...FALLBACK_IDENTITY } });
      return stdout.trim();
    }
    throw error;
  }
}

/** Moves `ref` from `expected` to `next` atomically; fails with reason 'ref-moved' when someone else moved it. */
export async function compareAndSetRef(repo: GitRepository, ref: string, next: string, expected: string, reflog: string, durable = false): Promise<void> {
  const args = [...(durable ? ['-c', 'core.fsync=reference', '-c', 'core.fsyncMethod=fsync'] : []), 'update-ref', '-m', reflog, ref, next, expected];
  try {
    await runGit(repo.root, args);
  } catch (error) {
    if (error instanceof GitCommandError && error.reason === 'git-failed') {
      throw new AvhError('ref-moved', 'The branch moved while Agent Version History was updating it; nothing was changed. Try again.', {}, { cause: error });
    }
    throw error;
  }
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
    fs.writeSync(fd, `${INDEX_LOCK_MARKER}${process.pid}:${processStartTime(process.pid) ?? ''}\n`);
    const now = statOrNull(real);
    const before = index.seededFrom;
    const unchanged = before === null
      ? now === null
      : now !== null && now.ino === before.ino && now.size === before.size && now.mtimeNs === before.mtimeNs;
    if (!unchanged) return false;
    if (durable) {
      const tfd = fs.openSync(index.file, 'r');
      try { fs.fsyncSync(tfd); } finally { fs.closeSync(tfd); }
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
 * Removes `.git/index.lock` only when it is one that installIndex created and its process is gone (a SIGKILL in
 * that instant). Any other index.lock belongs to git or another tool and is left alone. Returns whether it removed one.
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
  const pid = Number(match[1]);
  const start = processStartTime(pid);
  const alive = start !== null && (match[2] === '' || String(start) === match[2]);
  if (alive) return false;
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

