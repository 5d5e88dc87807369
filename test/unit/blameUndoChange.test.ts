import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { lineAt } from '../../src/core/blame/attributionCache';
import type { FileAttribution } from '../../src/core/blame/lineAttribution';
import { VersionHistory } from '../../src/core/versionHistory';
import { expectReason, repoPicture } from '../support/assertions';
import {
  assertNothingLost,
  cleanupTempDirs,
  contentInventory,
  git,
  head,
  makeRepo,
  read,
  subjectOf,
  testGitEnv,
  write,
} from '../support/gitFixtures';

/**
 * Undo This Change through the restore saga (issue 26): real git, the real store, the façade the CLI and the editor
 * use; the CLI's blame and undo-change through the shipped bundle (dist/cli.js). Every case checks the suite's
 * oracle: no content that existed before is lost.
 */

const DIST_CLI = path.resolve(__dirname, '../../../dist/cli.js');

const numbered = (n: number) => Array.from({ length: n }, (_, i) => `line ${i + 1}`);
const text = (lines: readonly string[]) => lines.map((l) => `${l}\n`).join('');
const edited = (lines: readonly string[], changes: Record<number, string>) => lines.map((l, i) => changes[i + 1] ?? l);
const fileLines = (repo: string, file = 'f.txt') => read(repo, file).split('\n').slice(0, -1);

/** What each line's owner is called in these tests: the turn's summary, else the commit's subject, else the kind. */
function owner(a: FileAttribution, line: number): string {
  const r = lineAt(a, line)!;
  return r.turn ? `turn:${r.turn.summary}` : r.kind === 'commit' ? `commit:${r.subject}` : r.kind;
}

async function repoWith(lines: readonly string[]): Promise<{ repo: string; history: VersionHistory }> {
  const repo = makeRepo();
  write(repo, 'f.txt', text(lines));
  git(repo, 'add', '-A');
  git(repo, 'commit', '-q', '-m', 'user writes the file');
  return { repo, history: await VersionHistory.open(repo) };
}

async function turn(history: VersionHistory, chatId: string, prompt: string, edit: () => void) {
  const { turnId } = await history.beginTurn({ chatId, prompt, agent: `agent-${chatId}` });
  edit();
  const { version } = await history.endTurn(turnId, 'completed');
  assert.ok(version, 'the turn made a version');
  return { turnId, version };
}

function cli(repo: string, ...args: string[]) {
  const r = spawnSync(process.execPath, [DIST_CLI, ...args], { cwd: repo, encoding: 'utf8', env: testGitEnv() });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

describe('Undo This Change through the restore saga (real git, real store; nothing lost)', function () {
  this.timeout(120_000);
  afterEach(cleanupTempDirs);

  it('applies on top of later turns, a user commit and uncommitted edits; Redo brings it back', async () => {
    const base = numbered(20);
    const { repo, history } = await repoWith(base);
    try {
      write(repo, 'f.txt', text(edited(base, { 2: 'mine 2' }))); // the user's edit before the turn
      const a = await turn(history, 'A', 'two hunks\nand more words', () =>
        write(repo, 'f.txt', text(edited(base, { 2: 'mine 2', 5: 'A 5', 6: 'A 6', 15: 'A 15' }))),
      );
      await turn(history, 'B', 'line ten', () => {
        write(repo, 'f.txt', text(edited(base, { 2: 'mine 2', 5: 'A 5', 6: 'A 6', 10: 'B 10', 15: 'A 15' })));
        write(repo, 'b.txt', 'from B\n');
      });
      write(repo, 'f.txt', text(edited(base, { 2: 'mine 2', 5: 'A 5', 6: 'A 6', 10: 'B 10', 15: 'A 15', 18: 'C 18' })));
      git(repo, 'commit', '-q', '-am', 'my commit');
      const now = edited(base, { 2: 'mine 2', 5: 'A 5', 6: 'A 6', 10: 'B 10', 15: 'A 15', 18: 'C 18', 19: 'U 19' });
      write(repo, 'f.txt', text(now)); // uncommitted
      write(repo, 'notes.txt', 'untracked notes\n');
      const before = contentInventory(repo);
      const beforeHead = head(repo);
      // The Version History row's "Lines It Still Owns": the user's pre-turn line is not the turn's.
      assert.deepEqual(await history.linesOwnedBy(a.turnId), {
        turnId: a.turnId,
        lines: 3,
        files: [{ path: 'f.txt', lines: 3, first: 5 }],
        gone: 0,
      });

      const result = await history.undoChange('f.txt', 6, { turnId: a.turnId });
      assert.equal(result.result, 'restored');
      assert.equal(result.scope, 'change');
      assert.equal(result.turnId, a.turnId);
      assert.ok(result.preserved, 'the uncommitted edits were saved first');
      assert.equal(subjectOf(repo), '[Revert] Undid a change of f.txt of turn "two hunks"');
      assert.equal(head(repo), result.restoreCommit);
      assert.deepEqual(
        fileLines(repo),
        edited(now, { 5: 'line 5', 6: 'line 6' }),
        'only the hunk holding line 6 went back; the other hunk, later work and the uncommitted edit stay',
      );
      assert.equal(read(repo, 'notes.txt'), 'untracked notes\n');
      assert.equal(read(repo, 'b.txt'), 'from B\n');
      assertNothingLost(repo, before);
      // The Undo kept the turn in effect (only one change went back): it is not marked undone.
      const after = await history.attributeFile('f.txt');
      assert.equal(owner(after, 5), 'commit:user writes the file', 'the lines put back are their author’s again');
      assert.equal(owner(after, 15), 'turn:two hunks');
      assert.equal(owner(after, 2), 'pre-turn');
      assert.equal(owner(after, 10), 'turn:line ten');
      assert.equal(owner(after, 18), 'commit:my commit');
      assert.equal(lineAt(after, 15)!.turn!.undone, false);
      assert.equal((await history.linesOwnedBy(a.turnId)).lines, 1);
      await expectReason(history.linesOwnedBy('0b6e2c1f-5a4d-4c1e-9f3a-2d7e8b9c0a11'), 'turn-unknown');

      const redo = await history.redo();
      assert.equal(redo.result, 'restored');
      assert.deepEqual(fileLines(repo), now, 'Redo brings the change back (and the saved edits with it)');
      assert.equal(owner(await history.attributeFile('f.txt'), 5), 'turn:two hunks');
      assertNothingLost(repo, before);
      assert.notEqual(head(repo), beforeHead, 'history is never rewritten');
    } finally {
      await history.close();
    }
  });

  it('refuses overlapping later work by naming it (a later turn, uncommitted edits); nothing changes', async () => {
    const base = numbered(12);
    const { repo, history } = await repoWith(base);
    try {
      const a = await turn(history, 'A', 'block', () =>
        write(repo, 'f.txt', text(edited(base, { 5: 'A 5', 6: 'A 6' }))),
      );
      const b = await turn(history, 'B', 'rework', () =>
        write(repo, 'f.txt', text(edited(base, { 5: 'A 5', 6: 'B 6', 10: 'B 10' }))),
      );
      write(repo, 'f.txt', text(edited(base, { 5: 'A 5', 6: 'B 6', 9: 'mine 9', 10: 'B 10' })));
      const picture = repoPicture(repo);
      const before = contentInventory(repo);
      const error = await expectReason(history.undoChange('f.txt', 5, { turnId: a.turnId }), 'revert-conflict');
      assert.equal(
        error.message,
        `Undo This Change cannot apply cleanly: later work changed the same lines in f.txt line 6 (a later agent ` +
          `turn, ${b.version.slice(0, 7)}). Nothing was changed. Undo This File or Undo Only This Turn may still apply.`,
      );
      assert.equal(error.details.files, 'f.txt');
      assert.doesNotMatch(error.message, /rework|block/, 'no prompt in an error');
      // Next to the user's own uncommitted line: named as theirs.
      const mine = await expectReason(history.undoChange('f.txt', 10, { turnId: b.turnId }), 'revert-conflict');
      assert.match(mine.message, /f\.txt line 9 \(your uncommitted changes\)/);
      assert.deepEqual(repoPicture(repo), picture, 'files, index and refs as they were');
      assertNothingLost(repo, before);
      const listed = await history.status();
      assert.equal(listed.operation, null);
      assert.equal(listed.recovery, null);
    } finally {
      await history.close();
    }
  });

  it('refuses clearly what it cannot take back, and changes nothing', async () => {
    const base = numbered(8);
    const { repo, history } = await repoWith(base);
    try {
      const a = await turn(history, 'A', 'one line', () => write(repo, 'f.txt', text(edited(base, { 3: 'A 3' }))));
      const picture = repoPicture(repo);
      await expectReason(history.undoChange('f.txt', 1, { turnId: a.turnId }), 'not-a-turn-change');
      await expectReason(history.undoChange('f.txt', 1), 'not-a-turn-change');
      await expectReason(history.undoChange('f.txt', 99), 'not-a-turn-change');
      await expectReason(history.undoChange('f.txt', 0), 'invalid-input');
      await expectReason(history.undoChange('f.txt', 'x'), 'invalid-input');
      await expectReason(history.undoChange('../outside.txt', 1), 'outside-repository');
      await expectReason(history.undoChange('', 1), 'invalid-input');
      const other = await turn(history, 'B', 'another', () => write(repo, 'g.txt', 'g\n'));
      const moved = await expectReason(history.undoChange('f.txt', 3, { turnId: other.turnId }), 'not-a-turn-change');
      assert.match(moved.message, /changed since/);
      // A running turn's lines are partial work, not a version yet: Undo of the turn takes them back.
      const { turnId } = await history.beginTurn({ chatId: 'C', prompt: 'running' });
      write(repo, 'f.txt', text(edited(base, { 3: 'A 3', 7: 'C 7' })));
      const running = await expectReason(history.undoChange('f.txt', 7), 'not-a-turn-change');
      assert.match(running.message, /not a version yet/);
      await history.endTurn(turnId, 'cancelled');
      assert.deepEqual(
        Object.keys(repoPicture(repo)).sort(),
        [...Object.keys(picture), 'g.txt'].sort(),
        'nothing but the turns’ own files',
      );
      assert.equal(read(repo, 'f.txt'), text(edited(base, { 3: 'A 3', 7: 'C 7' })));
    } finally {
      await history.close();
    }
  });

  it('the CLI (shipped bundle): blame as a table and --json, undo-change, and exit codes for bad input', async () => {
    assert.ok(fs.existsSync(DIST_CLI), 'dist/cli.js is missing: run `npm run build` first');
    const base = numbered(6);
    const { repo, history } = await repoWith(base);
    let turnId: string;
    try {
      ({ turnId } = await turn(history, 'A', 'Make line four louder', () =>
        write(repo, 'f.txt', text(edited(base, { 4: 'LINE 4' }))),
      ));
      write(repo, 'logo.png', Buffer.from([137, 80, 78, 71, 0, 1, 2, 10]));
    } finally {
      await history.close();
    }
    const table = cli(path.join(repo), 'blame', 'f.txt');
    assert.equal(table.code, 0, table.stderr);
    const rows = table.stdout.trimEnd().split('\n');
    assert.match(rows[0], /^LINES\s+WHO\s+WHEN\s+COMMIT\s+WHAT$/);
    assert.match(rows[1], /^1-3\s+Test User\s.*user writes the file$/);
    assert.match(rows[2], /^4\s+agent-A \(chat A\)\s.*turn "Make line four louder"$/);
    const json = JSON.parse(cli(repo, 'blame', 'f.txt', '--json', '--rev', 'HEAD').stdout) as {
      path: string;
      rev: string;
      lines: number;
      ranges: { start: number; end: number; kind: string; turn: { id: string; via: string } | null }[];
    };
    assert.equal(json.path, 'f.txt');
    assert.equal(json.rev, head(repo));
    assert.equal(json.lines, 6);
    assert.deepEqual(
      json.ranges.map((r) => [r.start, r.end, r.kind, r.turn?.id ?? null]),
      [
        [1, 3, 'commit', null],
        [4, 4, 'turn', turnId],
        [5, 6, 'commit', null],
      ],
    );
    const before = contentInventory(repo);
    for (const [args, code, message] of [
      [['blame', 'logo.png'], 2, /logo\.png is a binary file/],
      [['blame', 'nope.txt'], 2, /nope\.txt does not exist in the working tree/],
      [['blame', 'f.txt', '--rev', 'no-such-branch'], 2, /not a commit/],
      [['undo-change', 'f.txt', '--line', '1'], 2, /No agent turn wrote this line/],
      [['undo-change', 'f.txt', '--line', 'x'], 2, /--line must be a whole number/],
      [['undo-change', 'f.txt'], 2, /--line/],
    ] as const) {
      const r = cli(repo, ...args);
      assert.equal(r.code, code, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, message);
    }
    const undone = cli(repo, 'undo-change', 'f.txt', '--line', '4', '--json');
    assert.equal(undone.code, 0, undone.stderr);
    const result = JSON.parse(undone.stdout) as { result: string; scope: string; restoreCommit: string };
    assert.deepEqual([result.result, result.scope], ['restored', 'change']);
    assert.equal(read(repo, 'f.txt'), text(base));
    assert.equal(subjectOf(repo), '[Revert] Undid a change of f.txt of turn "Make line four louder"');
    assertNothingLost(repo, before);
    const help = cli(repo, 'help', 'blame');
    assert.match(help.stdout, /agent-versions blame <file> \[--rev <rev>\]/);
  });
});
