import * as fs from 'node:fs';
import * as path from 'node:path';
import { AvhError } from '../errors';
import { includedPaths } from './secretPolicy';
import { ScanEntry, scanForSecrets, SecretFinding } from './secretScanner';
import { editExcludeBlock, EXCLUDE_BLOCK_END, excludePattern, pathOfPattern, readExcludeBlock } from './infoExclude';
import { hasEscapedBytes } from './pathBytes';
import type { GitRepository } from './repository';

/**
 * Issue 15: files that would enter a version for the first time and look like secrets stay out of it. They
 * are written to the repository's `info/exclude` (in the common git dir) under a marked block, so git itself
 * treats them as ignored from then on: status stays clean, `add -A` skips them, restores never touch them.
 */

export const EXCLUDE_BLOCK_START =
  '# agent-versions: secrets (files left out of versions; use Include in Versions or Add to .gitignore to change)';
export { EXCLUDE_BLOCK_END };

/**
 * The snapshot's secrets filter: judges new files (`candidates`, untracked and not ignored) before anything hashes
 * them, and excludes in `info/exclude` the findings that are new to versions (not in HEAD's tree, not in the user's
 * index) and that the user did not include. Returns them; the snapshot then never stages them, so no object of
 * theirs is written. No git process when nothing looks like a secret. Never touches HEAD, an index or the files.
 */
export async function excludeNewSecretPaths(
  repo: GitRepository,
  candidates: readonly string[],
): Promise<SecretFinding[]> {
  let findings = scanForSecrets(
    repo.root,
    candidates.map((p) => ({ path: p })),
  );
  if (findings.length > 0) {
    const [known, included] = await Promise.all([
      pathsInHeadOrUserIndex(
        repo,
        findings.map((f) => f.path),
      ),
      includedPaths(repo),
    ]);
    findings = findings.filter((f) => !known.has(f.path) && !included.has(f.path));
  }
  if (findings.length > 0) {
    await editExcludeBlock(repo, EXCLUDE_BLOCK_START, (lines) => [
      ...lines,
      ...findings.map((f) => excludePattern(f.path)).filter((p): p is string => p !== null),
    ]);
  }
  return findings;
}

/** Rule matches among the files the user already tracks (for `doctor`): reported only, never excluded. */
export async function secretsInTrackedFiles(repo: GitRepository): Promise<SecretFinding[]> {
  const { stdout } = await repo.git.run(repo.root, ['ls-files', '-z', '-s']);
  return scanForSecrets(repo.root, parseStageEntries(stdout));
}

/** The paths (relative, `/`-separated) currently in our `info/exclude` block. */
export async function excludedSecretPaths(repo: GitRepository): Promise<string[]> {
  return (await readExcludeBlock(repo, EXCLUDE_BLOCK_START)).map(pathOfPattern).filter((p): p is string => p !== null);
}

/** Removes `relPath`'s line from our exclude block (the user chose to version it, or to ignore it in .gitignore). */
export async function removeExclusion(repo: GitRepository, relPath: string): Promise<void> {
  const pattern = excludePattern(relPath);
  await editExcludeBlock(repo, EXCLUDE_BLOCK_START, (lines) => lines.filter((line) => line !== pattern));
}

/** Appends an anchored pattern for `relPath` to the repository's top-level `.gitignore` (created if missing). */
export function appendToGitignore(repo: GitRepository, relPath: string): void {
  const pattern = excludePattern(relPath);
  if (pattern === null)
    throw new AvhError(
      'invalid-input',
      'That file name cannot be written as a .gitignore pattern; nothing was changed.',
    );
  const file = path.join(repo.root, '.gitignore');
  let existing = '';
  try {
    existing = fs.readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  if (existing.split(/\r?\n/).includes(pattern)) return;
  fs.appendFileSync(file, `${existing.length > 0 && !existing.endsWith('\n') ? '\n' : ''}${pattern}\n`);
}

/** `ls-files -s -z` lines: `<mode> <oid> <stage>\t<path>`. */
function parseStageEntries(stdout: string): ScanEntry[] {
  return stdout
    .split('\0')
    .filter(Boolean)
    .map((line) => {
      const tab = line.indexOf('\t');
      return { mode: line.slice(0, line.indexOf(' ')), path: line.slice(tab + 1) };
    });
}

/** Which of `paths` HEAD's tree or the user's index holds (those are the user's files: never excluded). */
export async function pathsInHeadOrUserIndex(repo: GitRepository, paths: readonly string[]): Promise<Set<string>> {
  const env = { GIT_LITERAL_PATHSPECS: '1' };
  // A name that is not UTF-8 cannot be an argument (the command line is UTF-8): it counts as not the user's, so
  // a secret of that name is left out, the safe side.
  const named = paths.filter((p) => !hasEscapedBytes(p));
  if (named.length === 0) return new Set();
  let stdout: string;
  try {
    ({ stdout } = await repo.git.run(repo.root, ['ls-files', '-z', '--with-tree=HEAD', '--', ...named], { env }));
  } catch {
    // No HEAD yet: the index alone.
    ({ stdout } = await repo.git.run(repo.root, ['ls-files', '-z', '--', ...named], { env }));
  }
  return new Set(stdout.split('\0').filter(Boolean));
}
