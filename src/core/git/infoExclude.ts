import * as fs from 'node:fs';
import * as path from 'node:path';
import { writeFileAtomic } from '../store/atomicWrite';
import { decodeBytes, encodeBytes } from './pathBytes';
import type { GitRepository } from './repository';

/**
 * Our marked blocks in the repository's `info/exclude` (in the common git dir, shared by all worktrees): git
 * itself then treats the listed paths as ignored. Each block has its own start line and the shared end line; the
 * user's own lines, and other blocks, are never touched. The one writer of that file (secrets, heavy folders).
 */

export const EXCLUDE_BLOCK_END = '# agent-versions: end';

const excludeFiles = new Map<string, string>();

/** `info/exclude` of the common git dir, as git itself resolves it. */
export async function excludeFile(repo: GitRepository): Promise<string> {
  let file = excludeFiles.get(repo.gitDir);
  if (!file) {
    const { stdout } = await repo.git.run(repo.root, ['rev-parse', '--git-path', 'info/exclude']);
    file = path.resolve(repo.root, stdout.replace(/\n$/, ''));
    excludeFiles.set(repo.gitDir, file);
  }
  return file;
}

function readBlock(file: string, start: string): { before: string[]; block: string[]; after: string[] } {
  let text = '';
  try {
    text = decodeBytes(fs.readFileSync(file)); // a name that is not UTF-8 keeps its bytes (pathBytes.ts)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  const first = lines.indexOf(start);
  const end = first < 0 ? -1 : lines.indexOf(EXCLUDE_BLOCK_END, first);
  if (first < 0 || end < 0) return { before: lines, block: [], after: [] };
  return { before: lines.slice(0, first), block: lines.slice(first + 1, end), after: lines.slice(end + 1) };
}

/** The lines of the block that begins with `start` (empty when there is none). */
export async function readExcludeBlock(repo: GitRepository, start: string): Promise<string[]> {
  return readBlock(await excludeFile(repo), start).block;
}

/** Rewrites the block beginning with `start` (atomically; duplicates dropped); it disappears when it becomes empty. */
export async function editExcludeBlock(
  repo: GitRepository,
  start: string,
  edit: (lines: string[]) => string[],
): Promise<void> {
  const file = await excludeFile(repo);
  const { before, block, after } = readBlock(file, start);
  const next = [...new Set(edit(block))];
  const lines = next.length > 0 ? [...before, start, ...next, EXCLUDE_BLOCK_END, ...after] : [...before, ...after];
  fs.mkdirSync(path.dirname(file), { recursive: true });
  writeFileAtomic(file, encodeBytes(lines.length > 0 ? `${lines.join('\n')}\n` : ''));
}

/** An anchored gitignore pattern matching exactly `relPath`; null for names a pattern cannot hold (line breaks). */
export function excludePattern(relPath: string): string | null {
  if (/[\r\n]/.test(relPath) || relPath.length === 0) return null;
  return `/${relPath.replace(/[\\*?[]/g, '\\$&').replace(/ +$/, (spaces) => '\\ '.repeat(spaces.length))}`;
}

/** The path an anchored pattern of ours names (null for patterns of another shape). */
export function pathOfPattern(pattern: string): string | null {
  if (!pattern.startsWith('/')) return null;
  return pattern.slice(1).replace(/\\(.)/g, '$1');
}
