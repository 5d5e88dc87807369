// Helpers for the turn-semantics tests: the shipped CLI bundle as a real process, and exact trees of a repository
// (HEAD's, a commit's, and the working tree's as `git add -A` would stage it, built in a throwaway index).
import * as assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { git, testGitEnv } from './gitFixtures';

const ROOT = path.resolve(__dirname, '../../..');
/** The CLI users get (built by `npm run build`). */
export const DIST_CLI = path.join(ROOT, 'dist/cli.js');

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** `node dist/cli.js <args>` in `repo`. */
export function dist(repo: string, args: readonly string[], input = ''): CliRun {
  const r = spawnSync(process.execPath, [DIST_CLI, ...args], {
    cwd: repo,
    input,
    encoding: 'utf8',
    env: testGitEnv(),
    timeout: 60_000,
  });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

/** `node dist/cli.js <args> --json`, which must exit 0; its JSON. */
export function distJson<T = Record<string, unknown>>(repo: string, args: readonly string[], input = ''): T {
  const r = dist(repo, [...args, '--json'], input);
  assert.equal(r.code, 0, `agent-versions ${args.join(' ')} exited ${r.code}: ${r.stderr}${r.stdout}`);
  return JSON.parse(r.stdout) as T;
}

/** `turn begin` through the shipped CLI; the turn id. */
export function distBegin(repo: string, chat: string, prompt: string): string {
  return distJson<{ turnId: string }>(repo, ['turn', 'begin', '--chat', chat, '--prompt', prompt]).turnId;
}

export const treeOf = (repo: string, rev = 'HEAD') => git(repo, 'rev-parse', `${rev}^{tree}`).trim();
export const porcelain = (repo: string) => git(repo, 'status', '--porcelain', '--untracked-files=all').trim();

/** The working tree as `git add -A` stages it (ignored files left out), from a throwaway index: the real one is untouched. */
export function worktreeTree(repo: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'avh-index-'));
  const env = { ...testGitEnv(), GIT_INDEX_FILE: path.join(dir, 'index') };
  const run = (...args: string[]) => execFileSync('git', args, { cwd: repo, env, encoding: 'utf8' });
  try {
    run('read-tree', 'HEAD');
    run('add', '-A');
    return run('write-tree').trim();
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
