import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as path from 'node:path';
import { VersionHistory } from '../../src/core/versionHistory';
import {
  CrashScenario,
  KEEPS_LATER_CRASH_POINTS,
  newTally,
  RESTORE_CRASH_POINTS,
  sweepCrashPoints,
  treeOf,
} from '../support/crashSweep';
import { cleanupTempDirs, git, head, makeRepo, tempDir, write } from '../support/gitFixtures';

/**
 * Fault injection for Undo This Change (issue 26): the same saga as Undo This File, so the same sweep over the phase
 * registry's crash points (test/support/crashSweep.ts: SIGKILL at every phase boundary, inside each effect and inside
 * git; a new process reconciles; nothing lost / old, new or recovery / store agrees / lease released). The target
 * tree is written by hand from what the issue says the change is (the lines of that hunk as they were before the
 * turn) and committed by git in a clone that shares the objects: not by our code.
 */

const IDENTITY = ['-c', 'user.name=Oracle', '-c', 'user.email=oracle@example.com', '-c', 'commit.gpgsign=false'];
const numbered = (n: number) => Array.from({ length: n }, (_, i) => `line ${i + 1}`);
const text = (lines: readonly string[]) => lines.map((l) => `${l}\n`).join('');
const edited = (lines: readonly string[], changes: Record<number, string>) => lines.map((l, i) => changes[i + 1] ?? l);

/** The tree of `start` with `files` written over it, as git commits it in a clone sharing the repository's objects. */
function oracleTree(repo: string, start: string, files: Record<string, string>): string {
  const clone = tempDir('avh-oracle-');
  git(clone, 'clone', '-q', '--shared', '--no-checkout', repo, '.');
  git(clone, 'checkout', '-q', '--detach', start);
  for (const [file, content] of Object.entries(files)) write(clone, file, content);
  git(clone, ...IDENTITY, 'add', '-A');
  git(clone, ...IDENTITY, 'commit', '-q', '--allow-empty', '-m', 'oracle');
  return treeOf(clone);
}

/** The working tree (not ignored) as a commit on HEAD, made by git alone, for the oracle's clone. */
function workingTreeAsCommit(repo: string): string {
  const env = {
    ...process.env,
    GIT_INDEX_FILE: path.join(tempDir('avh-oracle-index-'), 'index'),
    GIT_CONFIG_NOSYSTEM: '1',
  };
  execFileSync('git', ['read-tree', 'HEAD'], { cwd: repo, env });
  execFileSync('git', ['add', '-A'], { cwd: repo, env });
  const tree = execFileSync('git', ['write-tree'], { cwd: repo, env, encoding: 'utf8' }).trim();
  return git(repo, ...IDENTITY, 'commit-tree', tree, '-p', 'HEAD', '-m', 'oracle').trim();
}

const BASE = numbered(16);
/** After turn A (two hunks: lines 4–5 and 12), turn B of another chat (line 8) and a user commit (line 15). */
const NOW = edited(BASE, { 4: 'A 4', 5: 'A 5', 8: 'B 8', 12: 'A 12', 15: 'mine 15' });

async function laterWorkRepo(): Promise<{ repo: string; turnA: string }> {
  const repo = makeRepo();
  write(repo, 'app.txt', text(BASE));
  git(repo, 'add', '-A');
  git(repo, 'commit', '-q', '-m', 'app');
  const h = await VersionHistory.open(repo);
  try {
    const a = await h.beginTurn({ chatId: 'A', prompt: 'A two hunks' });
    write(repo, 'app.txt', text(edited(BASE, { 4: 'A 4', 5: 'A 5', 12: 'A 12' })));
    assert.ok((await h.endTurn(a.turnId, 'completed')).version);
    const b = await h.beginTurn({ chatId: 'B', prompt: 'B one line' });
    write(repo, 'app.txt', text(edited(BASE, { 4: 'A 4', 5: 'A 5', 8: 'B 8', 12: 'A 12' })));
    write(repo, 'b.txt', 'from B\n');
    assert.ok((await h.endTurn(b.turnId, 'completed')).version);
    write(repo, 'app.txt', text(NOW));
    git(repo, 'commit', '-q', '-am', 'my commit');
    return { repo, turnA: a.turnId };
  } finally {
    await h.close();
  }
}

const SCENARIOS: CrashScenario[] = [
  {
    name: 'Undo This Change (clean tree, a later turn of another chat and a user commit)',
    setup: async () => {
      const { repo, turnA } = await laterWorkRepo();
      const targetTree = oracleTree(repo, head(repo), { 'app.txt': text(edited(NOW, { 4: 'line 4', 5: 'line 5' })) });
      return { repo, args: ['undo-change', 'app.txt', '--line', '5', '--turn', turnA, '--json'], targetTree };
    },
  },
  {
    name: 'Undo This Change with uncommitted edits in the same file and an untracked file (saved first)',
    setup: async () => {
      const { repo, turnA } = await laterWorkRepo();
      write(repo, 'app.txt', text(edited(NOW, { 10: 'mine 10, uncommitted' })));
      write(repo, 'notes.txt', 'untracked notes\n');
      write(repo, 'ignored/cache.txt', 'ignored stays\n');
      const targetTree = oracleTree(repo, workingTreeAsCommit(repo), {
        'app.txt': text(edited(NOW, { 10: 'mine 10, uncommitted', 12: 'line 12' })),
      });
      return { repo, args: ['undo-change', 'app.txt', '--line', '12', '--turn', turnA, '--json'], targetTree };
    },
  },
];

describe('Undo This Change fault injection (SIGKILL at every phase boundary and inside effects)', function () {
  this.timeout(900_000);
  const tally = newTally();
  after(() => {
    console.log(
      `      crash points run: ${tally.ran} (not reached in that scenario: ${tally.skipped}); ended at ${JSON.stringify(tally.outcomes)}`,
    );
    cleanupTempDirs();
  });

  for (const scenario of SCENARIOS) {
    it(`${scenario.name}: every crash point reconciles to old state, new state or recovery, losing nothing`, async () => {
      assert.deepEqual(
        await sweepCrashPoints(scenario, [...RESTORE_CRASH_POINTS, ...KEEPS_LATER_CRASH_POINTS], tally),
        [],
      );
    });
  }

  it('every named crash point fired in at least one Undo This Change scenario', () => {
    const never = [...RESTORE_CRASH_POINTS, ...KEEPS_LATER_CRASH_POINTS].filter((p) => !tally.fired.has(p));
    assert.deepEqual(never, [], `crash points that never fired: ${never.join(', ')}`);
  });
});
