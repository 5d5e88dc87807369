import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * The common git dir of a linked worktree (the folder its `commondir` file names: config, objects, refs), else the
 * git dir itself. From the files alone, no git process.
 */
export function commonGitDir(gitDir: string): string {
  try {
    return path.resolve(gitDir, fs.readFileSync(path.join(gitDir, 'commondir'), 'utf8').trim());
  } catch {
    return gitDir; // not a linked worktree
  }
}
