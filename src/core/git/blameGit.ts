import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { commonGitDir } from './gitDirs';
import { GitCommandError } from './gitErrors';
import { readHead, resolveCommit } from './history';
import { looseCommitParents } from './looseObject';
import type { GitRepository } from './repository';
import { reverseTurnTree } from './reverseMerge';
import { TemporaryIndex } from './temporaryIndex';

// Git work of other modules that attribution uses, re-exported so this file lists every git call the module makes.
export { readHead, resolveCommit, reverseTurnTree };

/**
 * Every git command line attribution and Undo This Change run, in one file, all through the repository's git client
 * (`repo.git`). Read-only for the repository the user sees: the only writes are objects (Undo This Change's merge
 * inputs), a temporary index of our own, and small files in our state folder (the ancestry file and private git
 * dirs, below).
 */

/** Why blame could not run on a path, from the one stderr table (gitErrors.ts). */
export type BlameFailure = 'no-such-path' | 'no-such-revision';

export class BlameGitFailure extends Error {
  constructor(
    readonly failure: BlameFailure,
    readonly gitError: GitCommandError,
  ) {
    super(failure);
    this.name = 'BlameGitFailure';
  }
}

function blameFailure(error: unknown): never {
  if (error instanceof GitCommandError) {
    const code = error.gitErrorCode;
    if (code === 'no-such-path' || code === 'no-such-revision') throw new BlameGitFailure(code, error);
  }
  throw error;
}

export interface BlameRun {
  /** The file at this commit; absent: `contents` as the working tree copy (on top of HEAD, or of `privateHead`). */
  rev?: string;
  contents?: Buffer;
  /** The ancestry (graft) file for `-S`, or null when our history needs none. */
  ancestryFile: string | null;
  /**
   * For the working tree copy: the commit(s) it is on top of instead of HEAD (a running turn's base snapshot, and
   * the HEAD it moved to meanwhile). git 2.39 cannot combine `--contents` with a commit, so blame runs with a private
   * git dir (privateGitDir) whose HEAD (and MERGE_HEAD) name them.
   */
  parents?: readonly string[];
}

/** `git blame --incremental` of `file`: groups of lines with their commit, no line text. */
export async function blameIncremental(
  repo: GitRepository,
  file: string,
  run: BlameRun,
  signal?: AbortSignal,
): Promise<string> {
  const args = ['blame', '--incremental'];
  if (run.ancestryFile) args.push('-S', run.ancestryFile);
  if (run.rev !== undefined) args.push(run.rev);
  else args.push('--contents', '-');
  args.push('--', file);
  const env = run.rev === undefined && run.parents?.length ? privateGitDir(repo, run.parents) : undefined;
  try {
    const { stdout } = await repo.git.run(repo.root, args, {
      ...(run.rev === undefined ? { input: run.contents ?? Buffer.alloc(0) } : {}),
      ...(env ? { env } : {}),
      ...(signal ? { signal } : {}),
    });
    return stdout;
  } catch (error) {
    blameFailure(error);
  }
}

/**
 * A git dir of our own (`<state>/blame/head-<oid>`) that shares the repository's objects and refs (`commondir`) but
 * whose HEAD is `parents[0]` and MERGE_HEAD the rest: blame's working-tree commit then sits on the turn's base
 * snapshot. The user's HEAD, index and working tree are not involved. Written once per base, atomically.
 */
function privateGitDir(repo: GitRepository, parents: readonly string[]): Record<string, string> {
  const key = crypto
    .createHash('sha1')
    .update(`${commonDir(repo)}\0${parents.join(' ')}`)
    .digest('hex')
    .slice(0, 16);
  const dir = path.join(blameDir(repo), `head-${key}`);
  if (!fs.existsSync(path.join(dir, 'commondir'))) {
    const staging = `${dir}.tmp-${process.pid}-${crypto.randomUUID()}`;
    fs.mkdirSync(staging, { recursive: true });
    fs.writeFileSync(path.join(staging, 'HEAD'), `${parents[0]}\n`);
    if (parents.length > 1) fs.writeFileSync(path.join(staging, 'MERGE_HEAD'), `${parents.slice(1).join('\n')}\n`);
    fs.writeFileSync(path.join(staging, 'commondir'), `${commonDir(repo)}\n`);
    try {
      fs.renameSync(staging, dir);
    } catch {
      fs.rmSync(staging, { recursive: true, force: true }); // another process made the same one first
    }
  }
  return { GIT_DIR: dir, GIT_WORK_TREE: repo.root };
}

const commonDir = (repo: GitRepository): string => commonGitDir(repo.gitDir);

/** Our state folder's `blame/`, or (a read-only repository) one in the temporary folder. */
function blameDir(repo: GitRepository): string {
  const preferred = path.join(repo.stateDir, 'blame');
  try {
    fs.mkdirSync(preferred, { recursive: true });
    fs.accessSync(preferred, fs.constants.W_OK);
    return preferred;
  } catch {
    const fallback = path.join(os.tmpdir(), `agent-versions-blame-${process.getuid?.() ?? 'user'}`);
    fs.mkdirSync(fallback, { recursive: true, mode: 0o700 });
    // Only a folder of our own: files planted by someone else would be read as our ancestry.
    const st = fs.lstatSync(fallback);
    if (!st.isDirectory() || (process.getuid && st.uid !== process.getuid()))
      throw new Error('no private folder for attribution files');
    return fallback;
  }
}

const ANCESTRY_PREFIX = 'ancestry-';
const STALE_MS = 10 * 60_000;

/**
 * The graft lines as a file blame's `-S` reads, named after its content (so a file in use is never rewritten);
 * other ancestry files older than ten minutes are removed when a new one is written. Null for no lines.
 */
export function ancestryFile(repo: GitRepository, lines: string): string | null {
  if (lines.length === 0) return null;
  const dir = blameDir(repo);
  const name = `${ANCESTRY_PREFIX}${crypto.createHash('sha1').update(lines).digest('hex').slice(0, 20)}`;
  const file = path.join(dir, name);
  if (fs.existsSync(file)) return file;
  const staging = `${file}.tmp-${process.pid}-${crypto.randomUUID()}`;
  fs.writeFileSync(staging, lines);
  fs.renameSync(staging, file);
  const now = Date.now();
  for (const other of fs.readdirSync(dir)) {
    if (!other.startsWith(ANCESTRY_PREFIX) || other === name) continue;
    try {
      if (now - fs.statSync(path.join(dir, other)).mtimeMs > STALE_MS)
        fs.rmSync(path.join(dir, other), { force: true });
    } catch {
      /* removed by another process meanwhile */
    }
  }
  return file;
}

/** Commits never change: their parents are read once per process. */
const knownParents = new Map<string, readonly string[]>();

/** The parents of each commit, from loose objects where possible, else one `git rev-list` for the rest. Read-only. */
export async function commitParents(
  repo: GitRepository,
  oids: readonly string[],
): Promise<ReadonlyMap<string, readonly string[]>> {
  const result = new Map<string, readonly string[]>();
  const ask: string[] = [];
  for (const oid of new Set(oids)) {
    const known = knownParents.get(oid) ?? looseCommitParents(repo, oid);
    if (known) {
      knownParents.set(oid, known);
      result.set(oid, known);
    } else ask.push(oid);
  }
  if (ask.length > 0) {
    let stdout = '';
    try {
      ({ stdout } = await repo.git.run(repo.root, ['rev-list', '--no-walk=unsorted', '--parents', '--stdin'], {
        input: `${ask.join('\n')}\n`,
      }));
    } catch {
      // A commit that no longer exists (a lost object): its graft is left out; the others are asked one by one.
      for (const oid of ask) {
        try {
          const one = await repo.git.run(repo.root, ['rev-list', '--no-walk', '--parents', oid, '--']);
          stdout += one.stdout;
        } catch {
          /* gone */
        }
      }
    }
    for (const line of stdout.split('\n')) {
      const [oid, ...parents] = line.trim().split(' ');
      if (!oid) continue;
      knownParents.set(oid, parents);
      result.set(oid, parents);
    }
  }
  return result;
}

/** Whether `ancestor` is in `commit`'s own history (git's parents, not our ancestry). Read-only. */
export async function isAncestor(repo: GitRepository, ancestor: string, commit: string): Promise<boolean> {
  const { code } = await repo.git.run(repo.root, ['merge-base', '--is-ancestor', ancestor, commit], { okCodes: [1] });
  return code === 0;
}

/** `Agent-Turn` and `Agent-Chat` trailers of commits our records do not know (a rebuilt or older state). Read-only. */
export async function turnTrailers(
  repo: GitRepository,
  oids: readonly string[],
): Promise<Map<string, { turnId: string; chatId: string }>> {
  const found = new Map<string, { turnId: string; chatId: string }>();
  if (oids.length === 0) return found;
  const { stdout } = await repo.git.run(repo.root, [
    'log',
    '--no-walk=unsorted',
    '--format=%H%x1f%(trailers:key=Agent-Turn,valueonly,separator=%x2c)%x1f' +
      '%(trailers:key=Agent-Chat,valueonly,separator=%x2c)%x1e',
    ...oids,
    '--',
  ]);
  for (const record of stdout.split('\x1e')) {
    const [oid, turn, chat] = record.replace(/^\n/, '').split('\x1f');
    const turnId = (turn ?? '').trim().split(',')[0];
    if (oid && turnId) found.set(oid, { turnId, chatId: (chat ?? '').trim().split(',')[0] ?? '' });
  }
  return found;
}

/**
 * The commit `rev` names (resolved without our ancestry) and the bytes of `file` in it, in one git process; null
 * for whichever does not exist. Read-only.
 */
export async function commitAndBlob(
  repo: GitRepository,
  rev: string,
  file: string,
): Promise<{ commit: string | null; blob: Buffer | null }> {
  if (rev.length === 0 || rev.length > 256 || /[\n\r\0]/.test(rev) || rev.startsWith('-'))
    return { commit: null, blob: null };
  if (/[\n\r]/.test(file)) {
    // The batch protocol is one name per line: such a path is asked for on its own (cat-file).
    const commit = await resolveCommit(repo, rev).catch(() => null);
    return { commit, blob: commit ? await blobAt(repo, commit, file) : null };
  }
  const { stdout } = await repo.git.run(repo.root, ['cat-file', '--batch-command'], {
    input: `info ${rev}^{commit}\ncontents ${rev}:${file}\n`,
  });
  const first = stdout.indexOf('\n');
  const info = /^([0-9a-f]{40,64}) commit \d+$/.exec(stdout.slice(0, first));
  const rest = stdout.slice(first + 1);
  const second = rest.indexOf('\n');
  const blob = /^[0-9a-f]{40,64} blob \d+$/.test(rest.slice(0, second))
    ? Buffer.from(rest.slice(second + 1, rest.endsWith('\n') ? -1 : undefined), 'utf8')
    : null;
  return { commit: info ? info[1] : null, blob };
}

/** The bytes of `path` in commit `rev`, or null when the commit has no such file (or no such commit). Read-only. */
export async function blobAt(repo: GitRepository, rev: string, file: string): Promise<Buffer | null> {
  try {
    const { stdout } = await repo.git.run(repo.root, ['cat-file', 'blob', `${rev}:${file}`]);
    return Buffer.from(stdout, 'utf8');
  } catch (error) {
    if (error instanceof GitCommandError) return null;
    throw error;
  }
}

/** The entry of `file` in `rev`'s tree (mode and blob), or null when it has none. Read-only. */
export async function treeEntry(
  repo: GitRepository,
  rev: string,
  file: string,
): Promise<{ mode: string; oid: string } | null> {
  const { stdout } = await repo.git.run(repo.root, ['ls-tree', '-z', '--full-tree', rev, '--', file]);
  const match = /^(\d+) blob ([0-9a-f]{40,64})\t/.exec(stdout.split('\0')[0] ?? '');
  return match ? { mode: match[1], oid: match[2] } : null;
}

/** The `@@ -a,b +c,d @@` headers of the zero-context diff between two blobs. Read-only. */
export async function blobHunks(repo: GitRepository, from: string, to: string): Promise<string> {
  const { stdout } = await repo.git.run(repo.root, [
    'diff',
    '--no-color',
    '--no-ext-diff',
    '--no-textconv',
    '--no-indent-heuristic',
    '-U0',
    from,
    to,
  ]);
  return stdout;
}

/**
 * `tree` with `file` set to `content` (mode kept), or removed when `content` is null: Undo This Change's "theirs".
 * Writes a blob and a tree object, through a temporary index of our own; refs, the index and files stay as they are.
 */
export async function treeWithFile(
  repo: GitRepository,
  tree: string,
  file: string,
  mode: string,
  content: Buffer | null,
): Promise<string> {
  const index = TemporaryIndex.create(repo);
  try {
    await repo.git.run(repo.root, ['read-tree', tree], { env: index.env });
    if (content === null) {
      await repo.git.run(repo.root, ['update-index', '--force-remove', '-z', '--stdin'], {
        env: index.env,
        input: `${file}\0`,
      });
    } else {
      const blob = (
        await repo.git.run(repo.root, ['hash-object', '-w', '--no-filters', '--stdin'], { input: content })
      ).stdout.trim();
      await repo.git.run(repo.root, ['update-index', '--add', '--cacheinfo', `${mode},${blob},${file}`], {
        env: index.env,
      });
    }
    return (await repo.git.run(repo.root, ['write-tree'], { env: index.env })).stdout.trim();
  } finally {
    index.dispose();
  }
}
