/**
 * Two chats in one working tree (issue 25) under SIGKILL: chat A's turn ends while chat B's is mid-edit, and the
 * hook process making A's version (which takes B's reported file from B's base) is killed between the steps of the
 * commit path (real processes, the command entry's tsc output, where failpoints are live). Whatever step it died
 * at: the working tree is exactly as the agents left it (B's half-done edit included), nothing is lost, the
 * version (when the branch moved) never holds B's file, and B's own version, when B ends, holds it.
 */
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { contextOf } from '../../src/core/repoContextOf';
import { VersionHistory } from '../../src/core/versionHistory';
import {
  assertNothingLost,
  cleanupTempDirs,
  contentInventory,
  git,
  head,
  makeRepo,
  read,
  testGitEnv,
  write,
} from '../support/gitFixtures';

const ENTRY = path.resolve(__dirname, '../../src/cli/entry.js');
const A = 'chat-a';
const B = 'chat-b';

function hook(
  repo: string,
  agent: string,
  payload: Record<string, unknown>,
  failpoint?: string,
): { status: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string } {
  const env = { ...testGitEnv(), COPILOT_CLI: '', ...(failpoint ? { AVH_FAILPOINT: failpoint } : {}) };
  return spawnSync(process.execPath, [ENTRY, 'hook', agent, '--json'], {
    cwd: repo,
    input: JSON.stringify({ cwd: repo, ...payload }),
    encoding: 'utf8',
    env,
    timeout: 60_000,
  });
}

function ok(repo: string, agent: string, payload: Record<string, unknown>): Record<string, unknown> {
  const r = hook(repo, agent, payload);
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout) as Record<string, unknown>;
}

const begin = (session: string) => ({ hook_event_name: 'UserPromptSubmit', session_id: session, prompt: 'p' });
const stop = (session: string) => ({ hook_event_name: 'Stop', session_id: session });

function treeOf(repo: string, rev: string): Record<string, string> {
  const files: Record<string, string> = {};
  for (const name of git(repo, 'ls-tree', '-r', '-z', '--name-only', rev).split('\0').filter(Boolean))
    files[name] = git(repo, 'show', `${rev}:${name}`);
  return files;
}

async function turnVersions(repo: string): Promise<Map<string, string | null>> {
  const history = await VersionHistory.open(repo);
  try {
    const rows = await contextOf(history).store.read((r) =>
      r.all<{ chat_id: string; version_commit: string | null }>('SELECT chat_id, version_commit FROM turns'),
    );
    return new Map(rows.map((t) => [t.chat_id, t.version_commit]));
  } finally {
    await history.close();
  }
}

describe('two chats: A’s version (taking B’s reported file from B’s base) killed at each step of the commit path', function () {
  this.timeout(300_000);
  after(cleanupTempDirs);

  for (const point of ['turn-commit:after-write-tree', 'turn-commit:after-commit', 'turn-commit:after-update-ref']) {
    it(`SIGKILL at ${point}: the working tree as the agents left it, nothing lost, B’s file never in A’s version`, async () => {
      const repo = makeRepo();
      write(repo, 'src.txt', 'one\n');
      write(repo, 'b.txt', 'b0\n');
      git(repo, 'add', '-A');
      git(repo, 'commit', '-q', '-m', 'files');
      const start = head(repo);
      const before = contentInventory(repo);
      ok(repo, 'claude-code', begin(A));
      ok(repo, 'codex', begin(B));
      write(repo, 'src.txt', 'two\n');
      ok(repo, 'claude-code', {
        hook_event_name: 'PostToolUse',
        session_id: A,
        tool_name: 'Edit',
        tool_input: { file_path: path.join(repo, 'src.txt'), old_string: 'one', new_string: 'two' },
      });
      write(repo, 'b.txt', 'b-half\n');
      ok(repo, 'codex', {
        hook_event_name: 'PostToolUse',
        session_id: B,
        tool_name: 'apply_patch',
        tool_input: { command: '*** Begin Patch\n*** Update File: b.txt\n@@\n-b0\n+b-half\n*** End Patch\n' },
      });
      const killed = hook(repo, 'claude-code', stop(A), point);
      assert.equal(killed.signal, 'SIGKILL', `the hook reached ${point}: ${killed.stderr}`);
      assert.deepEqual([read(repo, 'src.txt'), read(repo, 'b.txt')], ['two\n', 'b-half\n']);
      // The next process settles what the killed one left (a pending turn, an index to repair).
      const versions = await turnVersions(repo);
      const versionA = versions.get(A) ?? null;
      if (point === 'turn-commit:after-update-ref') {
        assert.ok(versionA, 'the branch moved: the version is recorded');
        assert.deepEqual(treeOf(repo, versionA), { ...treeOf(repo, start), 'src.txt': 'two\n' });
      } else {
        assert.equal(versionA, null, 'the branch did not move: no version');
        assert.equal(head(repo), start);
      }
      assert.deepEqual([read(repo, 'src.txt'), read(repo, 'b.txt')], ['two\n', 'b-half\n']);
      assertNothingLost(repo, before);
      write(repo, 'b.txt', 'b-final\n');
      const endB = ok(repo, 'codex', stop(B));
      assert.equal(typeof endB.version, 'string');
      assert.equal(git(repo, 'show', `${String(endB.version)}:b.txt`), 'b-final\n');
      assert.equal(git(repo, 'show', `${String(endB.version)}:src.txt`), 'two\n');
      assert.equal(git(repo, 'status', '--porcelain'), '');
      assertNothingLost(repo, before);
    });
  }
});
