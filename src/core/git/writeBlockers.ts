import * as fs from 'node:fs';
import * as path from 'node:path';
import { commonGitDir } from './gitDirs';
import { baseEnv } from './gitClient';
import { fsPath } from './pathBytes';
import type { GitRepository } from './repository';
import type { TreeChange } from './worktreeUpdate';

/**
 * What would make a restore's worktree update fail half-way, found before anything moves (issue 25). git's
 * `read-tree -m -u` only warns about a file it cannot unlink or create and exits 0, and a non-required smudge
 * filter that fails leaves the stored form in the file, also with exit 0: both would be a half-applied restore.
 */

/**
 * Folders the update must write into that this process cannot write: the folder of every path it writes or
 * removes, or, for a folder still to be made, the nearest one that exists. Relative, `/`-terminated (`./` for the
 * top); sorted. No git process: one `access` per distinct folder.
 */
export function readOnlyFolders(root: string, changes: readonly TreeChange[]): string[] {
  const judged = new Map<string, boolean>();
  const refused = new Set<string>();
  for (const change of changes) {
    let dir = path.posix.dirname(change.path);
    // A folder still to be made is made in the nearest one that exists.
    while (dir !== '.' && !isFolder(path.join(root, dir))) dir = path.posix.dirname(dir);
    let writable = judged.get(dir);
    if (writable === undefined) {
      writable = canWrite(dir === '.' ? root : path.join(root, dir));
      judged.set(dir, writable);
    }
    if (!writable) refused.add(dir === '.' ? './' : `${dir}/`);
  }
  return [...refused].sort();
}

function isFolder(dir: string): boolean {
  try {
    return fs.lstatSync(fsPath(dir)).isDirectory();
  } catch {
    return false;
  }
}

function canWrite(dir: string): boolean {
  try {
    fs.accessSync(fsPath(dir), fs.constants.W_OK | fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** A path the update would write through a filter driver whose smudge step fails now. */
export interface FailingFilter {
  path: string;
  driver: string;
}

const FILTER_FAILED = /external filter .* failed|smudge filter .* failed/;

/**
 * The filter drivers (`filter` in .gitattributes) of the files the update writes whose smudge step fails now: one
 * dry run per driver, on the first file that uses it (`cat-file --batch --filters`, output discarded), so a tool
 * that is gone or broken is found before the update writes a file in its stored form. One `check-attr`, and one
 * `cat-file` only when a written file has a filter. Read-only.
 */
export async function failingFilters(
  repo: GitRepository,
  changes: readonly TreeChange[],
  mayHaveDrivers: (repo: GitRepository) => boolean = filterDriversMayBeConfigured,
): Promise<FailingFilter[]> {
  const written = changes.filter((c) => c.oid !== null && (c.mode === '100644' || c.mode === '100755'));
  // A `filter` attribute naming a driver no config defines is a no-op (gitattributes(5)): with no driver there is
  // nothing to dry-run, and no `check-attr` either.
  if (written.length === 0 || !mayHaveDrivers(repo)) return [];
  const { stdout } = await repo.git.run(repo.root, ['check-attr', '-z', '--stdin', 'filter'], {
    input: written.map((c) => `${c.path}\0`).join(''),
  });
  const fields = stdout.split('\0');
  const firstOfDriver = new Map<string, TreeChange>();
  const byPath = new Map(written.map((c) => [c.path, c]));
  for (let i = 0; i + 2 < fields.length; i += 3) {
    const [file, , driver] = [fields[i], fields[i + 1], fields[i + 2]];
    if (driver === 'unspecified' || driver === 'unset' || driver === 'set' || firstOfDriver.has(driver)) continue;
    const change = byPath.get(file);
    if (change) firstOfDriver.set(driver, change);
  }
  const failing: FailingFilter[] = [];
  for (const [driver, change] of firstOfDriver) {
    // Paths holding a line break cannot be a --batch line: not dry-run (read-tree's own stderr still tells).
    if (change.path.includes('\n')) continue;
    let failed: boolean;
    try {
      const result = await repo.git.run(repo.root, ['cat-file', '--batch', '--filters'], {
        input: `${change.oid} ${change.path}\n`,
        stdoutIgnored: true,
      });
      failed = FILTER_FAILED.test(result.stderr);
    } catch {
      failed = true; // a required filter that fails makes cat-file fail
    }
    if (failed) failing.push({ path: change.path, driver });
  }
  return failing;
}

/**
 * Whether any config git reads for this repository may define a filter driver (`[filter "…"]`), found from the
 * files alone: the repository's config (and `config.worktree`), the global files, the system file, and the
 * `GIT_CONFIG_*` variables that add config, as our git processes see them (baseEnv). In doubt — an `[include]` /
 * `[includeIf]`, a file that cannot be read, a platform whose system files git finds elsewhere (macOS, Windows) —
 * true, so the `check-attr` runs: a false "none" would let a failing smudge filter write a file's stored form
 * (issue 25); a false "maybe" only costs one git process. No git process.
 */
export function filterDriversMayBeConfigured(
  repo: Pick<GitRepository, 'root' | 'gitDir' | 'git'>,
  env: NodeJS.ProcessEnv = baseEnv(undefined),
  platform: NodeJS.Platform = process.platform,
): boolean {
  if (platform !== 'linux') return true;
  if (/(^|['\s])(filter|include|includeif)\./i.test(env.GIT_CONFIG_PARAMETERS ?? '')) return true;
  const count = Number(env.GIT_CONFIG_COUNT ?? 0);
  for (let i = 0; i < (Number.isFinite(count) ? count : 0); i++)
    if (/^(filter|include|includeif)\./i.test(env[`GIT_CONFIG_KEY_${i}`] ?? '')) return true;
  const files = configFiles(repo, env);
  return files === null || files.some(mayDefineFilter);
}

/** The config files git reads, in no particular order (git-config(1), FILES); null when they cannot be told. */
function configFiles(repo: Pick<GitRepository, 'root' | 'gitDir' | 'git'>, env: NodeJS.ProcessEnv): string[] | null {
  const files: string[] = [];
  if (!truthy(env.GIT_CONFIG_NOSYSTEM)) {
    if (env.GIT_CONFIG_SYSTEM) files.push(env.GIT_CONFIG_SYSTEM);
    else {
      const prefixFile = prefixSystemFile(repo);
      if (prefixFile === undefined) return null;
      files.push('/etc/gitconfig', ...(prefixFile === null ? [] : [prefixFile]));
    }
  }
  const home = env.HOME ?? '';
  if (env.GIT_CONFIG_GLOBAL) files.push(env.GIT_CONFIG_GLOBAL);
  else {
    if (home) files.push(path.join(home, '.gitconfig'));
    const xdg = env.XDG_CONFIG_HOME || (home ? path.join(home, '.config') : '');
    if (xdg) files.push(path.join(xdg, 'git', 'config'));
  }
  const common = commonGitDir(repo.gitDir);
  files.push(path.join(common, 'config'), path.join(repo.gitDir, 'config.worktree'));
  return files;
}

/**
 * `$(prefix)/etc/gitconfig` of the git that runs (a git built with a prefix other than /usr reads it); null for
 * /usr (its system file is /etc/gitconfig); undefined when the git that runs cannot be found (in doubt).
 */
function prefixSystemFile(repo: Pick<GitRepository, 'root' | 'git'>): string | null | undefined {
  try {
    const prefix = path.dirname(path.dirname(fs.realpathSync(repo.git.executable(repo.root))));
    return prefix === '/usr' ? null : path.join(prefix, 'etc', 'gitconfig');
  } catch {
    return undefined;
  }
}

const FILTER_OR_INCLUDE_SECTION = /^[ \t]*\[[ \t]*(filter|include|includeif)\b/im;

/** A missing file defines nothing; one that cannot be read may define anything. */
function mayDefineFilter(file: string): boolean {
  let text: string;
  try {
    text = fs.readFileSync(file, 'latin1');
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'ENOENT';
  }
  return FILTER_OR_INCLUDE_SECTION.test(text);
}

function truthy(value: string | undefined): boolean {
  return value !== undefined && /^(1|true|yes|on)$/i.test(value.trim());
}
