import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fixedFacts, storeFacts } from '../../src/core/blame/attributionFacts';
import {
  AttributionCache,
  attributionKey,
  lineAt,
  linesOwnedBy,
  ownerBlocks,
} from '../../src/core/blame/attributionCache';
import { attributeFile, AttributionRefused, FileAttribution, LineRange } from '../../src/core/blame/lineAttribution';
import { parseIncremental, unquotePath } from '../../src/core/blame/blamePorcelain';
import { UndoChangeConflict, undoChangeTree } from '../../src/core/blame/undoChange';
import { blameJson, blameText } from '../../src/cli/commands/blame';
import { contextOf } from '../../src/core/repoContextOf';
import { workingTreeCommit } from '../../src/core/git/reverseMerge';
import { VersionHistory } from '../../src/core/versionHistory';
import { repoPicture } from '../support/assertions';
import { cleanupTempDirs, git, head, makeRepo, read, write } from '../support/gitFixtures';

const numbered = (n: number, tag = 'line') => Array.from({ length: n }, (_, i) => `${tag} ${i + 1}`);
const joined = (lines: readonly string[], eol = '\n') => lines.map((l) => `${l}${eol}`).join('');
const replaced = (lines: readonly string[], changes: Record<number, string>) =>
  lines.map((l, i) => changes[i + 1] ?? l);

/** One label per line: `turn:<summary>`, `commit:<subject>`, `pre-turn`, `uncommitted`. */
function labels(a: FileAttribution): string[] {
  const out: string[] = [];
  for (const r of a.ranges) for (let l = r.start; l <= r.end; l++) out[l - 1] = label(r);
  return out;
}
const label = (r: LineRange) =>
  r.turn ? `turn:${r.turn.summary}` : r.kind === 'commit' ? `commit:${r.subject}` : r.kind;

/** Every line of the file is in exactly one range, in order. */
function assertCovers(a: FileAttribution): void {
  let next = 1;
  for (const r of a.ranges) {
    assert.equal(r.start, next, `range starts at line ${next}`);
    assert.ok(r.end >= r.start);
    next = r.end + 1;
  }
  assert.equal(next - 1, a.lineCount, 'the ranges cover every line');
}

async function blame(history: VersionHistory, file: string, extra: { rev?: string; contents?: string } = {}) {
  const a = await attributeFile({
    repo: history.repository,
    path: file,
    facts: storeFacts(contextOf(history).store),
    ...extra,
  });
  assertCovers(a);
  return a;
}

/** A repository with `f.txt` (12 numbered lines) committed by the user, and Version History open on it. */
async function repoWithFile(lines = numbered(12), file = 'f.txt', eol = '\n') {
  const repo = makeRepo();
  write(repo, file, joined(lines, eol));
  git(repo, 'add', '-A');
  git(repo, 'commit', '-q', '-m', 'user writes the file');
  return { repo, history: await VersionHistory.open(repo) };
}

async function turn(
  history: VersionHistory,
  chatId: string,
  prompt: string,
  edit: () => void,
  outcome: 'completed' | 'cancelled' = 'completed',
) {
  const { turnId } = await history.beginTurn({ chatId, prompt, agent: `agent-${chatId}`, chatTitle: `chat ${chatId}` });
  edit();
  const end = await history.endTurn(turnId, outcome);
  return { turnId, version: end.version };
}

describe('line attribution (real git, real store)', function () {
  this.timeout(60_000);
  afterEach(cleanupTempDirs);

  it("a turn over a dirty tree: the user's pre-turn lines stay the user's, running and committed", async () => {
    const { repo, history } = await repoWithFile();
    try {
      let text = replaced(numbered(12), { 2: 'line 2 edited by the user' });
      write(repo, 'f.txt', joined(text)); // uncommitted, before the turn
      const { turnId } = await history.beginTurn({
        chatId: 'A',
        prompt: 'Change line five\nplease',
        agent: 'claude-code',
      });
      text = replaced(text, { 5: 'line 5 by the agent' });
      write(repo, 'f.txt', joined(text));
      // Running: the agent's line is the turn's from its base snapshot, before any commit.
      const running = await blame(history, 'f.txt');
      assert.equal(running.uncommittedTurn, turnId);
      assert.equal(labels(running)[1], 'pre-turn');
      assert.equal(labels(running)[4], 'turn:Change line five');
      assert.equal(lineAt(running, 5)!.turn!.via, 'uncommitted');
      assert.equal(lineAt(running, 5)!.turn!.running, true);
      assert.equal(labels(running)[0], 'commit:user writes the file');

      const end = await history.endTurn(turnId, 'completed');
      const done = await blame(history, 'f.txt');
      const line5 = lineAt(done, 5)!;
      assert.equal(line5.kind, 'turn');
      assert.equal(line5.commit, end.version);
      assert.deepEqual(
        { id: line5.turn!.id, chat: line5.turn!.chatId, agent: line5.turn!.agent, via: line5.turn!.via },
        { id: turnId, chat: 'A', agent: 'claude-code', via: 'version' },
      );
      assert.equal(line5.turn!.summary, 'Change line five', 'the first line of the prompt, never the rest');
      assert.equal(lineAt(done, 2)!.kind, 'pre-turn', "the user's edit is not the agent's");
      assert.equal(lineAt(done, 2)!.turn, null);
      assert.deepEqual(
        labels(done).filter((l) => l.startsWith('turn:')),
        ['turn:Change line five'],
        'exactly one line is the turn’s',
      );
      // Plain git blame credits the user's line to the [Agent] commit: the catch this module exists for.
      assert.match(git(repo, 'blame', '-s', '-L2,2', 'f.txt'), new RegExp(`^${end.version!.slice(0, 8)}`));
      // As of a revision: the same answer for HEAD, and the file before the turn has no turn lines.
      assert.deepEqual(labels(await blame(history, 'f.txt', { rev: 'HEAD' })), labels(done));
      assert.ok(
        labels(await blame(history, 'f.txt', { rev: 'HEAD^' })).every((l) => l === 'commit:user writes the file'),
      );
    } finally {
      await history.close();
    }
  });

  it('the user commits while a turn runs: the commit keeps its lines, the turn its own', async () => {
    const { repo, history } = await repoWithFile();
    try {
      write(repo, 'f.txt', joined(replaced(numbered(12), { 2: 'dirty 2' })));
      const { turnId } = await history.beginTurn({ chatId: 'A', prompt: 'edit ten' });
      write(repo, 'g.txt', 'mine\n');
      git(repo, 'add', 'g.txt');
      git(repo, 'commit', '-q', '-m', 'user commits during the turn');
      write(repo, 'f.txt', joined(replaced(numbered(12), { 2: 'dirty 2', 10: 'ten by agent' })));
      write(repo, 'g.txt', 'mine\nagent adds\n');
      const running = await blame(history, 'g.txt');
      assert.deepEqual(labels(running), ['commit:user commits during the turn', 'turn:edit ten']);
      await history.endTurn(turnId, 'completed');
      assert.deepEqual(labels(await blame(history, 'g.txt')), ['commit:user commits during the turn', 'turn:edit ten']);
      const f = labels(await blame(history, 'f.txt'));
      assert.equal(f[1], 'pre-turn');
      assert.equal(f[9], 'turn:edit ten');
    } finally {
      await history.close();
    }
  });

  it('without our records (facts lost), turn commits are still named from their trailers', async () => {
    const { repo, history } = await repoWithFile();
    try {
      const t = await turn(history, 'A', 'from trailers', () =>
        write(repo, 'f.txt', joined(replaced(numbered(12), { 7: 'agent 7' }))),
      );
      const a = await attributeFile({
        repo: history.repository,
        path: 'f.txt',
        facts: fixedFacts({ turns: [], operations: [] }),
      });
      const line = lineAt(a, 7)!;
      assert.deepEqual(
        { kind: line.kind, id: line.turn?.id, chat: line.turn?.chatId, summary: line.turn?.summary },
        { kind: 'turn', id: t.turnId, chat: 'A', summary: 'from trailers' },
      );
      assert.equal(lineAt(a, 6)!.kind, 'commit');
    } finally {
      await history.close();
    }
  });

  it('two chats interleaved: each line names its own chat and agent', async () => {
    const { repo, history } = await repoWithFile();
    try {
      let text = numbered(12);
      const edit = (changes: Record<number, string>) => () => {
        text = replaced(text, changes);
        write(repo, 'f.txt', joined(text));
      };
      await turn(history, 'A', 'A1', edit({ 1: 'A1 wrote 1' }));
      await turn(history, 'B', 'B1', edit({ 12: 'B1 wrote 12' }));
      await turn(history, 'A', 'A2', edit({ 6: 'A2 wrote 6', 7: 'A2 wrote 7' }));
      edit({ 9: 'user wrote 9' })();
      git(repo, 'commit', '-q', '-am', 'my commit');
      await turn(history, 'B', 'B2', edit({ 1: 'B2 rewrote 1' }));
      const a = await blame(history, 'f.txt');
      const l = labels(a);
      assert.equal(l[0], 'turn:B2');
      assert.deepEqual(l.slice(5, 7), ['turn:A2', 'turn:A2']);
      assert.equal(l[8], 'commit:my commit');
      assert.equal(l[11], 'turn:B1');
      assert.equal(lineAt(a, 1)!.turn!.chatId, 'B');
      assert.equal(lineAt(a, 1)!.turn!.agent, 'agent-B');
      assert.equal(lineAt(a, 1)!.turn!.chatTitle, 'chat B');
      assert.equal(lineAt(a, 6)!.turn!.chatId, 'A');
      // The annotation gutter: one block per owner run.
      assert.deepEqual(
        ownerBlocks(a).map((b) => [b.start, b.end]),
        [
          [1, 1],
          [2, 5],
          [6, 7],
          [8, 8],
          [9, 9],
          [10, 11],
          [12, 12],
        ],
      );
      // The CLI's table and JSON (agent-versions blame f.txt [--json]).
      const viaFacade = await history.attributeFile(path.join(repo, 'f.txt'));
      const cli = { text: blameText(viaFacade), json: blameJson(viaFacade) };
      const rows = cli.text.split('\n');
      assert.match(rows[0], /^LINES\s+WHO\s+WHEN\s+COMMIT\s+WHAT$/);
      assert.match(rows[1], /^1\s+agent-B \(chat chat B\)\s.*turn "B2"$/);
      assert.match(rows[2], /^2-5\s+Test User\s.*user writes the file$/);
      assert.equal(rows.length, 8);
      assert.equal((cli.json as { ranges: unknown[] }).ranges.length, a.ranges.length);
      assert.deepEqual(linesOwnedBy(lineAt(a, 6)!.turn!.id, [a]), {
        lines: 2,
        files: [{ path: 'f.txt', lines: 2, first: 6 }],
      });
      assert.equal(linesOwnedBy(lineAt(a, 1)!.turn!.id, [a]).lines, 1);
    } finally {
      await history.close();
    }
  });

  it('a turn undone: its lines are no one’s, what it replaced is its author’s again; Redo brings them back to it', async () => {
    const { repo, history } = await repoWithFile();
    try {
      await turn(history, 'A', 'first', () => write(repo, 'f.txt', joined(replaced(numbered(12), { 3: 'T1 3' }))));
      write(repo, 'f.txt', joined(replaced(numbered(12), { 3: 'T1 3', 8: 'dirty 8' }))); // the user's, before T2
      const t2 = await turn(history, 'A', 'second', () =>
        write(repo, 'f.txt', joined(replaced(numbered(12), { 3: 'T2 3', 8: 'dirty 8', 11: 'T2 11' }))),
      );
      const before = await blame(history, 'f.txt');
      assert.deepEqual(
        [2, 7, 10].map((i) => labels(before)[i]),
        ['turn:second', 'pre-turn', 'turn:second'],
      );

      assert.equal((await history.undo(t2.turnId)).result, 'restored');
      const undone = await blame(history, 'f.txt');
      const l = labels(undone);
      assert.equal(l[2], 'turn:first', "T1's line is T1's again, not the restore's");
      assert.equal(l[7], 'pre-turn', "the user's pre-turn edit, back in the tree, is still the user's");
      assert.equal(l[10], 'commit:user writes the file', 'what T2 replaced is its author’s again');
      assert.ok(!l.some((x) => x === 'turn:second'), 'no line is credited to the undone turn');
      assert.ok(!l.some((x) => x.startsWith('commit:[Restore]')), 'nothing is credited to the restore itself');

      assert.equal((await history.redo()).result, 'restored');
      const redone = labels(await blame(history, 'f.txt'));
      assert.deepEqual(
        [2, 7, 10].map((i) => redone[i]),
        ['turn:second', 'pre-turn', 'turn:second'],
      );
      assert.ok(!redone.some((x) => x.startsWith('commit:[Restore]')));
    } finally {
      await history.close();
    }
  });

  it('a cancelled turn: its partial work is its own, uncommitted and inside a later turn’s base snapshot', async () => {
    const { repo, history } = await repoWithFile();
    try {
      const cancelled = await turn(
        history,
        'A',
        'stopped one',
        () => write(repo, 'f.txt', joined(replaced(numbered(12), { 4: 'partial 4' }))),
        'cancelled',
      );
      assert.equal(cancelled.version, null);
      const stopped = await blame(history, 'f.txt');
      assert.equal(stopped.uncommittedTurn, cancelled.turnId);
      assert.equal(labels(stopped)[3], 'turn:stopped one');
      assert.equal(lineAt(stopped, 4)!.turn!.outcome, 'cancelled');
      // A later turn begins on top of it: the partial work stays the stopped turn's.
      const next = await turn(history, 'B', 'next one', () =>
        write(repo, 'f.txt', joined(replaced(numbered(12), { 4: 'partial 4', 9: 'next 9' }))),
      );
      assert.ok(next.version);
      const after = await blame(history, 'f.txt');
      assert.equal(labels(after)[3], 'turn:stopped one');
      assert.equal(lineAt(after, 4)!.turn!.via, 'partial');
      assert.equal(labels(after)[8], 'turn:next one');
    } finally {
      await history.close();
    }
  });

  it('a cancelled turn over a dirty tree, undone (its partial work saved as [Interrupted]) and redone', async () => {
    const { repo, history } = await repoWithFile();
    try {
      write(repo, 'f.txt', joined(replaced(numbered(12), { 2: 'dirty 2' })));
      const cancelled = await turn(
        history,
        'A',
        'stopped one',
        () => write(repo, 'f.txt', joined(replaced(numbered(12), { 2: 'dirty 2', 4: 'partial 4' }))),
        'cancelled',
      );
      const stopped = labels(await blame(history, 'f.txt'));
      assert.deepEqual([stopped[1], stopped[3]], ['pre-turn', 'turn:stopped one']);
      const undo = await history.undo(cancelled.turnId);
      assert.ok(undo.preserved, 'the partial work was saved first');
      const undone = labels(await blame(history, 'f.txt'));
      assert.deepEqual([undone[1], undone[3]], ['pre-turn', 'commit:user writes the file']);
      await history.redo();
      const redone = await blame(history, 'f.txt');
      assert.deepEqual([labels(redone)[1], labels(redone)[3]], ['pre-turn', 'turn:stopped one']);
      assert.equal(lineAt(redone, 4)!.turn!.via, 'interrupted');
      assert.equal(lineAt(redone, 4)!.commit, undo.preserved);
    } finally {
      await history.close();
    }
  });

  it('Undo Only This Turn and Undo This File: the lines put back are their authors’ again, later turns keep theirs', async () => {
    const { repo, history } = await repoWithFile();
    try {
      let text = numbered(12);
      const edit = (file: string, changes: Record<number, string>) => () => {
        text = replaced(text, changes);
        write(repo, file, joined(text));
      };
      const a1 = await turn(history, 'A', 'A1', () => {
        edit('f.txt', { 1: 'A1 wrote 1' })();
        write(repo, 'other.txt', 'A1 other\n');
      });
      await turn(history, 'B', 'B1', edit('f.txt', { 12: 'B1 wrote 12' }));
      assert.equal((await history.undo(a1.turnId, { only: 'turn' })).scope, 'turn');
      const l = labels(await blame(history, 'f.txt'));
      assert.equal(l[0], 'commit:user writes the file', 'not the [Revert] commit');
      assert.equal(l[11], 'turn:B1');
      assert.ok(!l.some((x) => x.startsWith('commit:[Revert]')));

      await turn(history, 'B', 'B2', () => write(repo, 'g.txt', 'base\n'));
      const c1 = await turn(history, 'C', 'C1', () => {
        write(repo, 'g.txt', 'base\nC1 added\n');
        write(repo, 'f.txt', joined(replaced(text, { 6: 'C1 wrote 6' })));
      });
      assert.equal((await history.undoFile(c1.turnId, 'g.txt')).scope, 'file');
      assert.deepEqual(labels(await blame(history, 'g.txt')), ['turn:B2']);
      assert.equal(labels(await blame(history, 'f.txt'))[5], 'turn:C1', 'the rest of the turn stays its own');
    } finally {
      await history.close();
    }
  });

  it('renames are followed as git follows them: the user’s and the turn’s', async () => {
    const { repo, history } = await repoWithFile(numbered(12), 'old.txt');
    try {
      await turn(history, 'A', 'edit before', () =>
        write(repo, 'old.txt', joined(replaced(numbered(12), { 2: 'A 2' }))),
      );
      git(repo, 'mv', 'old.txt', 'new.txt');
      git(repo, 'commit', '-q', '-m', 'user renames');
      // A turn that renames and edits over a dirty tree (the user's uncommitted line 11).
      write(repo, 'new.txt', joined(replaced(numbered(12), { 2: 'A 2', 11: 'dirty 11' })));
      await turn(history, 'B', 'move and edit', () => {
        fs.mkdirSync(path.join(repo, 'moved'));
        git(repo, 'mv', 'new.txt', 'moved/final.txt');
        write(repo, 'moved/final.txt', joined(replaced(numbered(12), { 2: 'A 2', 7: 'B 7', 11: 'dirty 11' })));
      });
      const a = await blame(history, 'moved/final.txt');
      const l = labels(a);
      assert.equal(l[1], 'turn:edit before');
      assert.equal(lineAt(a, 2)!.origin.path, 'old.txt', 'the path as of the commit that wrote it');
      assert.equal(l[6], 'turn:move and edit');
      assert.equal(l[10], 'pre-turn');
      assert.equal(l[0], 'commit:user writes the file');
      assert.equal(lineAt(a, 1)!.origin.path, 'old.txt');
    } finally {
      await history.close();
    }
  });

  it('a binary file is refused clearly, in the working tree and in a version; nothing changes', async () => {
    const { repo, history } = await repoWithFile();
    try {
      await turn(history, 'A', 'add a picture', () =>
        write(repo, 'logo.png', Buffer.from([137, 80, 78, 71, 0, 1, 2, 10])),
      );
      const picture = repoPicture(repo);
      for (const rev of [undefined, 'HEAD']) {
        const error = await blame(history, 'logo.png', rev ? { rev } : {}).then(
          () => assert.fail('binary files are refused'),
          (e: unknown) => e,
        );
        assert.ok(error instanceof AttributionRefused);
        assert.equal(error.reason, 'binary-file');
        assert.equal(error.message, 'logo.png is a binary file: Version History attributes lines of text files only.');
      }
      const missing = await blame(history, 'nope.txt').catch((e: unknown) => e);
      assert.ok(missing instanceof AttributionRefused && missing.reason === 'no-such-file');
      const noRev = await blame(history, 'f.txt', { rev: 'no-such-branch' }).catch((e: unknown) => e);
      assert.ok(noRev instanceof AttributionRefused && noRev.reason === 'unknown-revision');
      const notThen = await blame(history, 'logo.png', { rev: 'HEAD^' }).catch((e: unknown) => e);
      assert.ok(notThen instanceof AttributionRefused && notThen.reason === 'no-such-file', String(notThen));
      const outside = await blame(history, '../elsewhere.txt').catch((e: unknown) => e);
      assert.ok(outside instanceof AttributionRefused && outside.reason === 'outside-repository');
      assert.deepEqual(repoPicture(repo), picture);
    } finally {
      await history.close();
    }
  });

  it('CRLF files (committed as CRLF, and through core.autocrlf) are attributed line by line', async () => {
    const { repo, history } = await repoWithFile(numbered(6), 'dos.txt', '\r\n');
    try {
      await turn(history, 'A', 'crlf edit', () =>
        write(repo, 'dos.txt', joined(replaced(numbered(6), { 3: 'A 3' }), '\r\n')),
      );
      const a = await blame(history, 'dos.txt');
      assert.equal(a.eol, 'crlf');
      assert.equal(a.lineCount, 6);
      assert.deepEqual(labels(a), [
        'commit:user writes the file',
        'commit:user writes the file',
        'turn:crlf edit',
        'commit:user writes the file',
        'commit:user writes the file',
        'commit:user writes the file',
      ]);
      // autocrlf: the blob has LF, the working copy CRLF; git converts the copy before comparing.
      git(repo, 'config', 'core.autocrlf', 'true');
      write(repo, 'auto.txt', joined(numbered(4)));
      git(repo, 'add', 'auto.txt');
      git(repo, 'commit', '-q', '-m', 'lf file');
      write(repo, 'auto.txt', joined(replaced(numbered(4), { 2: 'dirty 2' }), '\r\n'));
      assert.deepEqual(labels(await blame(history, 'auto.txt')), [
        'commit:lf file',
        'uncommitted',
        'commit:lf file',
        'commit:lf file',
      ]);
    } finally {
      await history.close();
    }
  });

  it('a 5,000-line file: every line attributed, each turn’s blocks exactly, cached lookups instant', async () => {
    const lines = numbered(5000);
    const { repo, history } = await repoWithFile(lines, 'big.ts');
    try {
      let text = lines;
      const edits: Record<string, number> = {};
      for (let t = 0; t < 5; t++) {
        const changes: Record<number, string> = {};
        for (let k = 0; k < 20; k++) changes[1 + t * 997 + k * 13] = `turn ${t} line ${k}`;
        edits[`turn ${t}`] = 20;
        await turn(history, t % 2 ? 'B' : 'A', `turn ${t}`, () => {
          text = replaced(text, changes);
          write(repo, 'big.ts', joined(text));
        });
      }
      const a = await blame(history, 'big.ts');
      assert.equal(a.lineCount, 5000);
      const counts: Record<string, number> = {};
      for (const l of labels(a)) if (l.startsWith('turn:')) counts[l.slice(5)] = (counts[l.slice(5)] ?? 0) + 1;
      assert.deepEqual(counts, edits);
      const cache = new AttributionCache();
      const key = attributionKey({ path: 'big.ts', head: head(repo), contents: read(repo, 'big.ts'), factsStamp: '1' });
      cache.set(key, a);
      // Every line answers from the cache (its cost: `npm run bench`, blame section, "Hover on a cached file").
      for (let i = 1; i <= 5000; i++) assert.ok(lineAt(cache.get(key)!, i), `line ${i}`);
    } finally {
      await history.close();
    }
  });
});

describe('blame porcelain parsing', () => {
  it('reads --incremental groups, once-per-commit headers, previous and quoted file names', () => {
    const a = 'a'.repeat(40);
    const b = 'b'.repeat(40);
    const parsed = parseIncremental(
      [
        `${a} 3 5 2`,
        'author Ann',
        'author-mail <ann@example.com>',
        'author-time 1700000000',
        'summary [Agent] Do it',
        `previous ${b} "old\\tname \\303\\251.txt"`,
        'filename "new \\303\\251.txt"',
        `${b} 1 1 4`,
        'author Bob',
        'author-time 1600000000',
        'summary first',
        'boundary',
        'filename old.txt',
        `${a} 9 7 1`,
        'filename "new \\303\\251.txt"',
        '',
      ].join('\n'),
    );
    assert.deepEqual(
      parsed.groups.map((g) => [g.commit[0], g.finalLine, g.count, g.origLine, g.path, g.previous?.path ?? null]),
      [
        ['b', 1, 4, 1, 'old.txt', null],
        ['a', 5, 2, 3, 'new é.txt', 'old\tname é.txt'],
        ['a', 7, 1, 9, 'new é.txt', null],
      ],
    );
    assert.deepEqual(parsed.commits.get(a), {
      commit: a,
      author: 'Ann',
      authorMail: 'ann@example.com',
      authorTime: 1700000000,
      summary: '[Agent] Do it',
      boundary: false,
    });
    assert.equal(parsed.commits.get(b)!.boundary, true);
    assert.equal(unquotePath('plain.txt'), 'plain.txt');
  });
});

describe('Undo This Change (tree only, real git)', function () {
  this.timeout(60_000);
  afterEach(cleanupTempDirs);

  const fileIn = (repo: string, tree: string, file: string) => git(repo, 'show', `${tree}:${file}`);

  it('takes back only the hunk holding the line, on top of later turns and commits; nothing moves', async () => {
    const { repo, history } = await repoWithFile(numbered(30));
    try {
      write(repo, 'f.txt', joined(replaced(numbered(30), { 20: 'dirty 20' }))); // the user's, before T
      const t = await turn(history, 'A', 'two hunks', () =>
        write(repo, 'f.txt', joined(replaced(numbered(30), { 3: 'T 3', 4: 'T 4', 10: 'T 10', 20: 'dirty 20' }))),
      );
      await turn(history, 'B', 'later turn', () =>
        write(
          repo,
          'f.txt',
          joined(replaced(numbered(30), { 3: 'T 3', 4: 'T 4', 10: 'T 10', 20: 'dirty 20', 25: 'U 25' })),
        ),
      );
      write(
        repo,
        'f.txt',
        joined(replaced(numbered(30), { 3: 'T 3', 4: 'T 4', 10: 'T 10', 20: 'dirty 20', 25: 'U 25', 30: 'mine 30' })),
      );
      git(repo, 'commit', '-q', '-am', 'my later commit');
      const picture = repoPicture(repo);
      const headBefore = head(repo);
      const undo = await undoChangeTree({
        repo: history.repository,
        facts: storeFacts(contextOf(history).store),
        ours: headBefore,
        path: 'f.txt',
        line: 4,
      });
      assert.equal(undo.change.commit, t.version);
      assert.deepEqual(undo.hunk.turnLines, { start: 3, count: 2 });
      assert.deepEqual(undo.hunk.preLines, { start: 3, count: 2 });
      assert.equal(undo.subject, '[Revert] Undid a change of f.txt of turn "two hunks"');
      assert.equal(
        fileIn(repo, undo.tree, 'f.txt'),
        joined(replaced(numbered(30), { 10: 'T 10', 20: 'dirty 20', 25: 'U 25', 30: 'mine 30' })),
        'only lines 3–4 went back; the other hunk, the user’s lines and later work stay',
      );
      assert.equal(head(repo), headBefore);
      assert.deepEqual(repoPicture(repo), picture, 'objects only: refs, index and files untouched');
    } finally {
      await history.close();
    }
  });

  it('refuses when later work changed the same lines, naming the file, the lines and who changed them', async () => {
    const { repo, history } = await repoWithFile(numbered(12));
    try {
      await turn(history, 'A', 'block', () =>
        write(repo, 'f.txt', joined(replaced(numbered(12), { 5: 'T 5', 6: 'T 6', 7: 'T 7' }))),
      );
      await turn(history, 'B', 'rework the middle', () =>
        write(repo, 'f.txt', joined(replaced(numbered(12), { 5: 'T 5', 6: 'U 6', 7: 'T 7' }))),
      );
      const picture = repoPicture(repo);
      const error = await undoChangeTree({
        repo: history.repository,
        facts: storeFacts(contextOf(history).store),
        ours: head(repo),
        path: 'f.txt',
        line: 5,
      }).then(
        () => assert.fail('overlapping later work is refused'),
        (e: unknown) => e,
      );
      assert.ok(error instanceof UndoChangeConflict, String(error));
      assert.equal(error.reason, 'revert-conflict');
      const later = head(repo).slice(0, 7);
      assert.deepEqual(error.overlaps, [{ path: 'f.txt', start: 6, end: 6, by: [`a later agent turn, ${later}`] }]);
      assert.match(
        error.message,
        new RegExp(
          `later work changed the same lines in f\\.txt line 6 \\(a later agent turn, ${later}\\)\\. Nothing was changed\\.`,
        ),
      );
      assert.doesNotMatch(error.message, /rework the middle/, 'no prompt in an error');
      assert.deepEqual(repoPicture(repo), picture);
    } finally {
      await history.close();
    }
  });

  it('over uncommitted edits (the working tree saved as an object): applies beside them, refuses over them', async () => {
    const { repo, history } = await repoWithFile(numbered(20));
    try {
      await turn(history, 'A', 'two places', () =>
        write(repo, 'f.txt', joined(replaced(numbered(20), { 3: 'T 3', 15: 'T 15' }))),
      );
      write(repo, 'f.txt', joined(replaced(numbered(20), { 3: 'T 3', 4: 'mine 4', 15: 'T 15' })));
      const picture = repoPicture(repo);
      const ours = await workingTreeCommit(history.repository, head(repo));
      const facts = storeFacts(contextOf(history).store);
      const request = { repo: history.repository, facts, ours, oursIsWorkingTree: true, path: 'f.txt' };
      const apart = await undoChangeTree({ ...request, line: 15 });
      assert.equal(fileIn(repo, apart.tree, 'f.txt'), joined(replaced(numbered(20), { 3: 'T 3', 4: 'mine 4' })));
      const error = await undoChangeTree({ ...request, line: 3 }).catch((e: unknown) => e);
      assert.ok(error instanceof UndoChangeConflict, String(error));
      assert.deepEqual(error.overlaps, [{ path: 'f.txt', start: 4, end: 4, by: ['your uncommitted changes'] }]);
      assert.deepEqual(repoPicture(repo), picture, 'the user’s edits, index and refs untouched');
      assert.equal(read(repo, 'f.txt'), joined(replaced(numbered(20), { 3: 'T 3', 4: 'mine 4', 15: 'T 15' })));
    } finally {
      await history.close();
    }
  });

  it('a file the turn created, CRLF kept, and lines no turn wrote refused', async () => {
    const { repo, history } = await repoWithFile(numbered(4), 'dos.txt', '\r\n');
    try {
      await turn(history, 'A', 'crlf and new', () => {
        write(repo, 'dos.txt', joined(replaced(numbered(4), { 2: 'A 2', 4: 'A 4' }), '\r\n'));
        write(repo, 'new.txt', 'only\nlines\n');
      });
      const facts = storeFacts(contextOf(history).store);
      const ours = head(repo);
      const crlf = await undoChangeTree({ repo: history.repository, facts, ours, path: 'dos.txt', line: 4 });
      assert.equal(fileIn(repo, crlf.tree, 'dos.txt'), joined(replaced(numbered(4), { 2: 'A 2' }), '\r\n'));
      const created = await undoChangeTree({ repo: history.repository, facts, ours, path: 'new.txt', line: 2 });
      assert.equal(git(repo, 'ls-tree', created.tree, '--', 'new.txt').trim(), '', 'the whole new file was the hunk');
      assert.equal(created.change.prePath, null);
      const user = await undoChangeTree({ repo: history.repository, facts, ours, path: 'dos.txt', line: 1 }).catch(
        (e: unknown) => e,
      );
      assert.ok(user instanceof AttributionRefused);
      assert.match(user.message, /No agent turn wrote this line/);
    } finally {
      await history.close();
    }
  });
});
