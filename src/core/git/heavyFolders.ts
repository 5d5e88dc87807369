import * as fs from 'node:fs';
import * as path from 'node:path';
import { editExcludeBlock, excludePattern } from './infoExclude';
import { fsPath } from './pathBytes';
import type { GitRepository } from './repository';
import { pathsInHeadOrUserIndex } from './secretExclusion';

/**
 * Issue 13: dependency and build folders, and files too large for a version, stay out of versions. They are
 * listed in the repository's `info/exclude` under their own marked block (the user's files, `.gitignore`
 * included, are never touched), so git itself ignores them from then on: edit or delete the block to change it.
 */

export const HEAVY_BLOCK_START =
  '# agent-versions: heavy folders and large files (left out of versions; edit or delete these lines to change)';

/** Common dependency and build output folders (and macOS folder metadata), as gitignore patterns. */
export const HEAVY_PATTERNS: readonly string[] = [
  'node_modules/',
  '.venv/',
  'venv/',
  '__pycache__/',
  'dist/',
  'build/',
  'target/',
  '.next/',
  '.DS_Store',
];

/** A file larger than this never enters a version. */
export const LARGE_FILE_BYTES = 50 * 1024 * 1024;

/**
 * Before the first version of a repository: when the folder has no top-level `.gitignore` (the user has not said
 * what to ignore), the heavy patterns go into our exclude block. A `.gitignore` that exists is respected as it
 * is and nothing is added. Returns whether it added the patterns.
 */
export async function excludeHeavyFoldersBeforeFirstVersion(repo: GitRepository): Promise<boolean> {
  if (fs.existsSync(path.join(repo.root, '.gitignore'))) return false;
  await editExcludeBlock(repo, HEAVY_BLOCK_START, (lines) => [...HEAVY_PATTERNS, ...lines]);
  return true;
}

/**
 * The snapshot's large-file filter: of the new files `candidates` (judged before anything hashes them), those
 * larger than LARGE_FILE_BYTES that are not in HEAD or the user's index are excluded in the block, so they are named
 * once and never considered again; the snapshot then never stages them (no 50 MB object is written). Returns them
 * (relative paths). Never touches an index or the working tree.
 */
export async function excludeLargeFiles(repo: GitRepository, candidates: readonly string[]): Promise<string[]> {
  const oversized = candidates.filter((p) => {
    try {
      const st = fs.lstatSync(fsPath(path.join(repo.root, p)));
      return st.isFile() && st.size > LARGE_FILE_BYTES;
    } catch {
      return false;
    }
  });
  if (oversized.length === 0) return [];
  // A large file the user already versions (in HEAD or their index) stays theirs to version.
  const known = await pathsInHeadOrUserIndex(repo, oversized);
  const large = oversized.filter((p) => !known.has(p));
  if (large.length === 0) return [];
  const patterns = large.map(excludePattern).filter((p): p is string => p !== null);
  await editExcludeBlock(repo, HEAVY_BLOCK_START, (lines) => [...lines, ...patterns]);
  return large;
}

/** The notice naming files left out for their size (said once: an excluded file is never about to enter again). */
export function largeFileNotice(files: readonly string[]): string | null {
  if (files.length === 0) return null;
  const list = files.join(', ');
  return files.length === 1
    ? `${list} is larger than 50 MB; Version History left it out of versions (listed in .git/info/exclude).`
    : `${list} are larger than 50 MB; Version History left them out of versions (listed in .git/info/exclude).`;
}
