import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * Which git runs (docs/product-contract.md §9, security): an absolute path, never one found inside the repository.
 * No state.
 */

export const GIT_NOT_FOUND = 'Git was not found on PATH. Install git, then try again.';
export const GIT_ONLY_INSIDE =
  'The only git on PATH is inside this repository; Agent Version History will not run it. Put an installed git ' +
  'first on PATH (or set git.path in VS Code), then try again.';

function isExecutableFile(file: string): boolean {
  try {
    if (!fs.statSync(file).isFile()) return false;
    fs.accessSync(file, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function isInside(child: string, parent: string): boolean {
  const rel = path.relative(parent, child);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

/**
 * The working tree around `dir` (nearest folder holding `.git`), else `dir` itself: its files are the repository's, not
 * the user's.
 */
export function untrustedFolderOf(dir: string): string {
  const start = path.resolve(dir);
  for (let d = start; ; d = path.dirname(d)) {
    if (fs.existsSync(path.join(d, '.git'))) return d;
    if (path.dirname(d) === d) return start;
  }
}

/**
 * Finds git as an absolute path: the first usable configured path, else the first `git` on PATH. Relative PATH
 * entries ('.', '' and the like name the current folder) and entries inside `untrusted` are skipped, so a `git`
 * committed to a repository never runs. Returns why not when none is usable.
 */
export function findGitExecutable(
  env: NodeJS.ProcessEnv,
  configured: readonly string[],
  untrusted: string,
  platform: NodeJS.Platform = process.platform,
): { git: string } | { missing: 'not-found' | 'only-inside' } {
  for (const file of configured)
    if (path.isAbsolute(file) && isExecutableFile(file)) return { git: path.resolve(file) };
  // A filesystem root as the untrusted folder would distrust everything: it is never a repository worth that.
  const distrust = path.dirname(untrusted) === untrusted ? () => false : (file: string) => isInside(file, untrusted);
  const pathVar = platform === 'win32' ? (env.Path ?? env.PATH ?? '') : (env.PATH ?? '');
  const name = platform === 'win32' ? 'git.exe' : 'git';
  let skipped = false;
  for (const dir of pathVar.split(path.delimiter)) {
    if (!path.isAbsolute(dir)) continue;
    const file = path.join(path.resolve(dir), name);
    if (!isExecutableFile(file)) continue;
    if (!distrust(file)) return { git: file };
    skipped = true;
  }
  return { missing: skipped ? 'only-inside' : 'not-found' };
}
