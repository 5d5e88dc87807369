import { execFileSync, spawnSync } from 'node:child_process';
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/** Runs git in `cwd` for a test (real git, isolated from the user's global config). */
export function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, {
    cwd,
    encoding: 'utf8',
    env: testGitEnv(),
    stdio: ['ignore', 'pipe', 'pipe'],
    maxBuffer: 256 << 20,
  });
}

export function gitStatus(cwd: string, ...args: string[]): { code: number; stdout: string; stderr: string } {
  const r = spawnSync('git', args, { cwd, encoding: 'utf8', env: testGitEnv() });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

export function testGitEnv(): NodeJS.ProcessEnv {
  return { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_TERMINAL_PROMPT: '0' };
}

const tempRoots: string[] = [];

export function tempDir(prefix = 'avh-test-'): string {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
  tempRoots.push(dir);
  return dir;
}

export function cleanupTempDirs(): void {
  for (const dir of tempRoots.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
}

/** A real repository: `git init -b main`, identity, no signing, one initial commit with a README and a .gitignore. */
export function makeRepo(options: { commit?: boolean } = {}): string {
  const dir = tempDir('avh-repo-');
  git(dir, 'init', '-q', '-b', 'main');
  git(dir, 'config', 'user.name', 'Test User');
  git(dir, 'config', 'user.email', 'test@example.com');
  git(dir, 'config', 'commit.gpgsign', 'false');
  if (options.commit !== false) {
    write(dir, 'README.md', '# demo\n');
    write(dir, '.gitignore', 'ignored/\n*.log\n');
    git(dir, 'add', '-A');
    git(dir, 'commit', '-q', '-m', 'initial');
  }
  return dir;
}

export function write(repo: string, rel: string, content: string | Buffer): void {
  const file = path.join(repo, rel);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, content);
}

export function read(repo: string, rel: string): string {
  return fs.readFileSync(path.join(repo, rel), 'utf8');
}

export function head(repo: string): string {
  return git(repo, 'rev-parse', 'HEAD').trim();
}

export function subjectOf(repo: string, rev = 'HEAD'): string {
  return git(repo, 'log', '-1', '--format=%s', rev).trim();
}

/**
 * Hashes of every file content a user could lose: HEAD's tree, every blob the index stages (what `git add -p`
 * left there, which may be in neither HEAD nor the worktree), and every non-ignored file in the worktree.
 */
export function contentInventory(repo: string): Set<string> {
  const blobs = new Set<string>(indexBlobs(repo));
  const headTree = gitStatus(repo, 'ls-tree', '-r', '-z', 'HEAD');
  if (headTree.code === 0) {
    for (const entry of headTree.stdout.split('\0')) {
      const m = /^\d+ blob ([0-9a-f]{40})\t/.exec(entry);
      if (m) blobs.add(m[1]);
    }
  }
  for (const oid of worktreeBlobs(repo)) blobs.add(oid);
  return blobs;
}

/** Blob ids the index stages (all stages, so a conflicted index counts too); gitlinks are not blobs. */
export function indexBlobs(repo: string): string[] {
  return git(repo, 'ls-files', '-s', '-z')
    .split('\0')
    .flatMap((entry) => {
      const m = /^(\d+) ([0-9a-f]{40}) \d\t/.exec(entry);
      return m && m[1] !== '160000' ? [m[2]] : [];
    });
}

function worktreeBlobs(repo: string): string[] {
  const files = git(repo, 'ls-files', '-z', '--cached', '--others', '--exclude-standard').split('\0').filter(Boolean);
  const existing = [...new Set(files)].filter((f) => {
    try {
      return fs.lstatSync(path.join(repo, f)).isFile() || fs.lstatSync(path.join(repo, f)).isSymbolicLink();
    } catch {
      return false;
    }
  });
  return existing.map((f) => {
    const full = path.join(repo, f);
    const st = fs.lstatSync(full);
    const data = st.isSymbolicLink() ? Buffer.from(fs.readlinkSync(full)) : fs.readFileSync(full);
    return blobOid(data);
  });
}

export function blobOid(data: Buffer): string {
  return crypto.createHash('sha1').update(`blob ${data.length}\0`).update(data).digest('hex');
}

/** Every blob reachable from any ref (including our private refs) or present in the worktree. */
export function reachableContent(repo: string): Set<string> {
  const set = new Set<string>([...worktreeBlobs(repo), ...indexBlobs(repo)]);
  const objects = gitStatus(repo, 'rev-list', '--objects', '--all');
  if (objects.code === 0) {
    const oids = objects.stdout
      .split('\n')
      .map((l) => l.split(' ')[0])
      .filter(Boolean);
    const types = execFileSync('git', ['cat-file', '--batch-check=%(objectname) %(objecttype)'], {
      cwd: repo,
      input: oids.join('\n'),
      encoding: 'utf8',
      env: testGitEnv(),
      maxBuffer: 256 * 1024 * 1024,
    });
    for (const line of types.split('\n')) {
      const [oid, type] = line.split(' ');
      if (type === 'blob') set.add(oid);
    }
  }
  return set;
}

/**
 * Fails when any content that existed before is neither in the worktree nor reachable (docs/product-contract.md §9,
 * "nothing lost").
 */
export function assertNothingLost(repo: string, before: Set<string>): void {
  const after = reachableContent(repo);
  const lost = [...before].filter((oid) => !after.has(oid));
  if (lost.length > 0)
    throw new Error(`nothing-lost violated: ${lost.length} blob(s) no longer in the worktree or reachable`);
}
