/**
 * The hook fast path (src/cli/hooks/fastHook.ts) through the real command: the test build of the shipped bundles
 * (dist/test-extension/dist/cli.js, which loads cliHook.js and, only when the fast path declines, cliMain.js), as real
 * processes in real git repositories, read back through the real store. Which path each event took comes from the
 * test build's AVH_HOOK_PATH_LOG; AVH_HOOK_FAST=off (test build only, like failpoints) forces the full path for
 * comparison.
 */
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Agent } from '../../src/cli/agents/agent';
import { AGENTS } from '../../src/cli/agents/registry';
import { DurableStore } from '../../src/core/store/durableStore';
import { appendRecordIfUnchanged } from '../../src/core/store/journalAppend';
import { HOOK_FACTS_FILE } from '../../src/core/turns/hookFacts';
import { VersionHistory } from '../../src/core/versionHistory';
import { seedRecoveryLatch } from '../support/assertions';
import { CLI, TEST_BUILD_CLI } from '../support/cliProcess';
import {
  assertNothingLost,
  blobOid,
  cleanupTempDirs,
  contentInventory,
  git,
  gitStatus,
  makeRepo,
  tempDir,
  testGitEnv,
  write,
} from '../support/gitFixtures';

const SECRET = 'OPENAI_KEY=sk-proj-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n';

/** The test build: the shipped bundles with the path log kept (the shipped command ignores it). */
const ENTRY = TEST_BUILD_CLI;

interface HookJson {
  action: 'began' | 'ended' | 'ignored';
  turnId?: string;
  outcome?: string;
  version?: string | null;
  cancelled?: string[];
}

interface Hook {
  code: number;
  stdout: string;
  stderr: string;
  /** The path the event took: 'fast engines=N' or 'declined:<reason>' (none when the event never reached the entry's hook code). */
  path: string | undefined;
}

let logSeq = 0;

function runHook(
  repo: string,
  payload: Record<string, unknown>,
  options: { fast?: boolean; env?: NodeJS.ProcessEnv } = {},
): Hook {
  const log = path.join(tempDir('avh-hooklog-'), `path-${logSeq++}.log`);
  const env = {
    ...testGitEnv(),
    AVH_HOOK_PATH_LOG: log,
    ...(options.fast === false ? { AVH_HOOK_FAST: 'off' } : {}),
    ...options.env,
  };
  const r = spawnSync(process.execPath, [ENTRY, 'hook', 'claude-code', '--json'], {
    cwd: repo,
    input: JSON.stringify({ cwd: repo, ...payload }),
    encoding: 'utf8',
    env,
    timeout: 60_000,
  });
  const logged = fs.existsSync(log) ? fs.readFileSync(log, 'utf8').trim() : undefined;
  return { code: r.status ?? (r.signal ? -1 : -2), stdout: r.stdout, stderr: r.stderr, path: logged };
}

const begin = (session: string, prompt = 'do the thing') => ({
  hook_event_name: 'UserPromptSubmit',
  session_id: session,
  prompt,
});
const stop = (session: string) => ({ hook_event_name: 'Stop', session_id: session });

function ok(r: Hook): HookJson {
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout) as HookJson;
}

/** Every row of every table but meta, ids and oids made comparable across repositories, timestamps left out. */
async function rows(repo: string): Promise<Record<string, unknown[]>> {
  const { store } = await DurableStore.open(path.join(repo, '.git', 'agent-versions'));
  try {
    const raw = await store.read((r) => {
      const tables = r
        .all<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' AND name <> 'meta' ORDER BY name")
        .map((t) => t.name);
      return Object.fromEntries(tables.map((t) => [t, r.all(`SELECT * FROM ${t} ORDER BY rowid`)]));
    });
    const ids = new Map<string, string>();
    const normal = (key: string, value: unknown): unknown => {
      if (key.endsWith('_at')) return '<time>';
      if (typeof value !== 'string') return value;
      if (/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(value)) {
        if (!ids.has(value)) ids.set(value, `<id ${ids.size}>`);
        return ids.get(value);
      }
      // Commits differ between the two repositories by their dates: compare what they hold.
      if (/^[0-9a-f]{40}$/.test(value)) return `<tree ${git(repo, 'rev-parse', `${value}^{tree}`)}>`;
      return value;
    };
    return Object.fromEntries(
      Object.entries(raw).map(([t, list]) => [
        t,
        list.map((row) => Object.fromEntries(Object.entries(row).map(([k, v]) => [k, normal(k, v)]))),
      ]),
    );
  } finally {
    await store.close();
  }
}

async function runningTurns(repo: string): Promise<string[]> {
  const history = await VersionHistory.open(repo);
  try {
    return (await history.status()).runningTurns.map((t) => t.turnId);
  } finally {
    await history.close();
  }
}

describe('hook fast path: the common hook events recorded without sql.js, exactly as the full path records them', function () {
  this.timeout(120_000);
  after(cleanupTempDirs);

  it('the same events leave the same rows through the fast path as through the full path (begin, end, begin, begin again, end with changes)', async () => {
    const [fastRepo, slowRepo] = [makeRepo(), makeRepo()];
    const before = contentInventory(fastRepo);
    const paths: Record<string, (string | undefined)[]> = { fast: [], slow: [] };
    const results: Record<string, HookJson[]> = { fast: [], slow: [] };
    for (const [name, repo, fast] of [
      ['fast', fastRepo, true],
      ['slow', slowRepo, false],
    ] as const) {
      const step = (payload: Record<string, unknown>) => {
        const r = runHook(repo, payload, { fast });
        paths[name].push(r.path);
        results[name].push(ok(r));
      };
      step(begin('chat-1', 'first'));
      step(stop('chat-1'));
      step(begin('chat-1', 'second'));
      step(begin('chat-1', 'third, the second was interrupted'));
      write(repo, 'src/app.ts', 'export const app = 1;\n');
      step(stop('chat-1'));
    }
    assert.deepEqual(paths.slow, Array(5).fill('declined:switched-off'));
    // The first event meets a store with no facts yet; the last commits its changes as a version on the fast path.
    assert.deepEqual(paths.fast, [
      'declined:no-facts',
      'fast engines=0',
      'fast engines=0',
      'fast engines=0',
      'fast engines=0',
    ]);
    const shape = (r: HookJson) => ({
      action: r.action,
      outcome: r.outcome,
      version: r.version === undefined ? undefined : r.version !== null,
      cancelled: r.cancelled?.length,
    });
    assert.deepEqual(results.fast.map(shape), results.slow.map(shape));
    assert.equal(results.fast[3].cancelled?.[0], results.fast[2].turnId, 'the interrupted turn is the one cancelled');
    assert.deepEqual(await rows(fastRepo), await rows(slowRepo));
    assert.equal(git(fastRepo, 'log', '-1', '--format=%s'), git(slowRepo, 'log', '-1', '--format=%s'));
    assertNothingLost(fastRepo, before);
  });

  it("a store another process holds open (the extension) sees the fast path's turns as soon as they are written", async () => {
    const repo = makeRepo();
    ok(runHook(repo, begin('chat-1')));
    ok(runHook(repo, stop('chat-1')));
    const history = await VersionHistory.open(repo);
    try {
      const began = runHook(repo, begin('chat-1', 'seen by the extension'));
      assert.equal(began.path, 'fast engines=0');
      const { turnId } = ok(began);
      assert.deepEqual(
        (await history.status()).runningTurns.map((t) => t.turnId),
        [turnId],
      );
      assert.equal(await history.promptOf(turnId!), 'seen by the extension');
      const ended = runHook(repo, stop('chat-1'));
      assert.equal(ended.path, 'fast engines=0');
      assert.deepEqual((await history.status()).runningTurns, []);
      // The extension's own write after the fast path's lands after it in the journal: nothing is overwritten.
      const next = await history.beginTurn({ chatId: 'chat-2', prompt: 'from the extension' });
      assert.deepEqual((await runningTurns(repo)).sort(), [next.turnId].sort());
      const view = await rows(repo);
      assert.equal(view.turns.length, 3);
    } finally {
      await history.close();
    }
  });

  it('declines, and the full path records the event, when another process wrote since the facts were kept', () => {
    const repo = makeRepo();
    ok(runHook(repo, begin('chat-1')));
    // Another process's write: a turn begun by the CLI's own command, not a hook.
    const other = spawnSync(process.execPath, [CLI, 'turn', 'begin', '--chat', 'chat-2', '--prompt', 'p', '--json'], {
      cwd: repo,
      encoding: 'utf8',
      env: testGitEnv(),
    });
    assert.equal(other.status, 0, other.stderr);
    const stale = runHook(repo, stop('chat-1'));
    assert.equal(stale.path, 'declined:stale');
    assert.equal(ok(stale).action, 'ended');
    // The full path wrote the facts again: the next event is fast.
    assert.equal(runHook(repo, begin('chat-1')).path, 'fast engines=0');
  });

  it('declines a new chat and a different branch; each is recorded by the full path', async () => {
    const repo = makeRepo();
    ok(runHook(repo, begin('chat-1')));
    ok(runHook(repo, stop('chat-1')));
    const unknown = runHook(repo, begin('chat-new'));
    assert.equal(unknown.path, 'declined:unknown-chat');
    assert.equal(ok(unknown).action, 'began');

    write(repo, 'notes.txt', 'untracked\n');
    // A dirty tree: the base snapshot is made on the fast path too (the next test compares it with the full path's).
    const dirty = runHook(repo, begin('chat-1'));
    assert.equal(dirty.path, 'fast engines=0');
    const dirtyTurn = ok(dirty).turnId!;
    git(repo, 'add', 'notes.txt');
    git(repo, 'commit', '-q', '-m', 'the user commits');
    // chat-new's turn still runs: its reported writes could shape chat-1's version, so the full path makes it (HEAD
    // moved since the turn's base, the user committed its file: the tree is unchanged, no version).
    const moved = runHook(repo, stop('chat-1'));
    assert.equal(moved.path, 'declined:other-chat-running');
    assert.equal(ok(moved).turnId, dirtyTurn);
    assert.equal(ok(moved).version, null);

    ok(runHook(repo, stop('chat-new')));
    git(repo, 'checkout', '-q', '-b', 'elsewhere');
    const otherBranch = runHook(repo, begin('chat-1'));
    assert.equal(otherBranch.path, 'declined:other-branch');
    assert.equal(otherBranch.code, 0, otherBranch.stderr);
  });

  it('a prompt on a dirty tree (it ends the interrupted turn) leaves the same rows, base snapshot, refs, index and exclusions through the fast path as through the full path', async () => {
    const [fastRepo, slowRepo] = [makeRepo(), makeRepo()];
    const paths: Record<string, (string | undefined)[]> = { fast: [], slow: [] };
    const results: Record<string, HookJson[]> = { fast: [], slow: [] };
    const befores: Record<string, Set<string>> = {};
    for (const [name, repo, fast] of [
      ['fast', fastRepo, true],
      ['slow', slowRepo, false],
    ] as const) {
      const step = (payload: Record<string, unknown>) => {
        const r = runHook(repo, payload, { fast });
        paths[name].push(r.path);
        results[name].push(ok(r));
      };
      step(begin('chat-1', 'first'));
      step(stop('chat-1'));
      step(begin('chat-1', 'second, interrupted with its work in the tree'));
      // The interrupted turn's partial work: an edit, a staged edit the user made, a new file, a new secret.
      write(repo, 'README.md', '# demo, edited by the turn\n');
      write(repo, 'staged.txt', 'staged by the user\n');
      git(repo, 'add', 'staged.txt');
      write(repo, 'staged.txt', 'staged by the user, then edited\n');
      write(repo, 'src/new.ts', 'export const n = 1;\n');
      // The turn's agent reported writing it (a tool event, the same line on both paths): its end folds it.
      ok(
        runHook(
          repo,
          {
            hook_event_name: 'PostToolUse',
            session_id: 'chat-1',
            tool_name: 'Write',
            tool_input: { file_path: path.join(repo, 'src/new.ts') },
          },
          { fast },
        ),
      );
      write(repo, '.env', SECRET);
      befores[name] = contentInventory(repo);
      // The secret stays in the tree, excluded in info/exclude (checked below), where the inventory no longer looks.
      befores[name].delete(blobOid(Buffer.from(SECRET)));
      step(begin('chat-1', 'third, on the dirty tree'));
      // A second prompt on the same dirty tree: the third turn changed nothing since its snapshot.
      step(begin('chat-1', 'fourth'));
    }
    assert.deepEqual(paths.slow, Array(5).fill('declined:switched-off'));
    assert.deepEqual(paths.fast, ['declined:no-facts', ...Array(4).fill('fast engines=0')]);
    const shape = (r: HookJson) => ({ action: r.action, cancelled: r.cancelled?.length, keys: Object.keys(r).sort() });
    assert.deepEqual(results.fast.map(shape), results.slow.map(shape));
    assert.deepEqual(results.fast[3].cancelled, [results.fast[2].turnId], 'the interrupted turn is the one cancelled');
    assert.deepEqual(results.fast[4].cancelled, [results.fast[3].turnId]);
    const fastRows = await rows(fastRepo);
    assert.deepEqual(fastRows, await rows(slowRepo));
    // The interrupted turn changed files (not-completed); the third changed nothing since its snapshot (no-changes).
    const turns = fastRows.turns as { no_version_reason: string | null; base_tree: string | null }[];
    assert.deepEqual(
      turns.map((t) => t.no_version_reason),
      ['no-changes', 'not-completed', 'no-changes', null],
    );
    assert.ok(turns[2].base_tree !== null && turns[3].base_tree !== null, 'the dirty begins have snapshot bases');
    for (const repo of [fastRepo, slowRepo]) {
      const [third, fourth] = [
        results[repo === fastRepo ? 'fast' : 'slow'][3],
        results[repo === fastRepo ? 'fast' : 'slow'][4],
      ];
      // One base ref per dirty begin, named after its turn, holding the working tree without the secret.
      const bases = git(repo, 'for-each-ref', '--format=%(refname)', 'refs/agent-versions/base/').trim().split('\n');
      assert.deepEqual(
        bases.sort(),
        [third.turnId, fourth.turnId].map((id) => `refs/agent-versions/base/${id}`).sort(),
      );
      assert.equal(
        git(repo, 'show', `refs/agent-versions/base/${third.turnId}:README.md`),
        '# demo, edited by the turn\n',
      );
      assert.equal(gitStatus(repo, 'cat-file', '-e', `refs/agent-versions/base/${third.turnId}:.env`).code, 128);
    }
    const picture = (repo: string) => ({
      // The snapshot's parent, its tree and the staged tree kept beside it (Agent-Staged), by content.
      base: git(
        repo,
        'log',
        '-1',
        '--format=%T %P%n%B',
        `refs/agent-versions/base/${results[repo === fastRepo ? 'fast' : 'slow'][3].turnId}`,
      )
        .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '<id>')
        .replace(
          /Agent-Staged: ([0-9a-f]{40})/,
          (_, c: string) => `Agent-Staged: <tree ${git(repo, 'rev-parse', `${c}^{tree}`)}>`,
        )
        .replace(/ [0-9a-f]{40}/, (c) => ` <tree ${git(repo, 'rev-parse', `${c.trim()}^{tree}`)}>`),
      staged: git(repo, 'for-each-ref', '--format=%(objectname)', 'refs/agent-versions/staged/')
        .trim()
        .split('\n')
        .filter(Boolean)
        .map((c) => git(repo, 'rev-parse', `${c}^{tree}`)),
      status: git(repo, 'status', '--porcelain=v1', '--untracked-files=all'),
      index: git(repo, 'ls-files', '-s'),
      exclude: fs.readFileSync(path.join(repo, '.git', 'info', 'exclude'), 'utf8'),
      head: git(repo, 'rev-parse', 'HEAD^{tree}'),
    });
    assert.deepEqual(picture(fastRepo), picture(slowRepo));
    // The interrupted turn's reports folded into its own record, the chat's file emptied: the same files on both.
    const toolWrites = (name: 'fast' | 'slow', repo: string) => {
      const dir = path.join(repo, '.git', 'agent-versions', 'tool-writes');
      return fs
        .readdirSync(dir, { recursive: true, withFileTypes: true })
        .filter((e) => e.isFile())
        .map((e) => ({
          file: path.relative(dir, path.join(e.parentPath, e.name)).replace(results[name][2].turnId!, '<second>'),
          text: fs.readFileSync(path.join(e.parentPath, e.name), 'utf8'),
        }))
        .sort((a, b) => (a.file < b.file ? -1 : 1));
    };
    assert.deepEqual(toolWrites('fast', fastRepo), toolWrites('slow', slowRepo));
    assert.ok(
      toolWrites('fast', fastRepo).some((f) => f.file === 'turns/<second>.json' && f.text.includes('src/new.ts')),
    );
    assert.equal(picture(fastRepo).staged.length, 2, 'the staged tree is kept, once per dirty begin');
    assertNothingLost(fastRepo, befores.fast);
    assertNothingLost(slowRepo, befores.slow);
    for (const repo of [fastRepo, slowRepo]) assert.equal(fs.readFileSync(path.join(repo, '.env'), 'utf8'), SECRET);
  });

  it('a prompt on a dirty tree whose append declines deletes the base snapshot ref it made: the full path records the turn and only its ref is left', async () => {
    const repo = makeRepo();
    ok(runHook(repo, begin('chat-1')));
    ok(runHook(repo, stop('chat-1')));
    const dir = path.join(repo, '.git', 'agent-versions');
    // Records of another process until the fast path's record would make a compaction due (the 100th since the base),
    // then facts that describe that very journal state (the filler touches no chat), so the event gets that far.
    const { store } = await DurableStore.open(dir);
    try {
      await store.transaction((tx) => tx.run("INSERT INTO meta (key, value) VALUES ('filler', '0')"));
      let state = (await store.readWithJournalState(() => null)).journal;
      while (state.lastSeq - state.baseSeq < 99) {
        await store.transaction((tx) => tx.run("UPDATE meta SET value = value + 1 WHERE key = 'filler'"));
        state = (await store.readWithJournalState(() => null)).journal;
      }
      const file = path.join(dir, HOOK_FACTS_FILE);
      const facts = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;
      fs.writeFileSync(file, JSON.stringify({ ...facts, journal: state }));
    } finally {
      await store.close();
    }
    write(repo, 'README.md', '# demo, edited\n');
    write(repo, 'new.txt', 'new\n');
    const before = contentInventory(repo);
    const r = runHook(repo, begin('chat-1', 'on a dirty tree'));
    assert.equal(r.path, 'declined:compaction-due');
    const { turnId } = ok(r);
    // The full path's own snapshot is the only base ref: the fast path's was deleted before it declined.
    assert.deepEqual(git(repo, 'for-each-ref', '--format=%(refname)', 'refs/agent-versions/').trim().split('\n'), [
      `refs/agent-versions/base/${turnId}`,
    ]);
    assert.deepEqual(await runningTurns(repo), [turnId]);
    assert.equal(git(repo, 'show', `refs/agent-versions/base/${turnId}:new.txt`), 'new\n');
    assertNothingLost(repo, before);
  });

  it("a prompt on a dirty tree beside a nested repository or a hidden index entry declines before writing anything: only the full path's base ref is left", () => {
    for (const shape of ['nested', 'hidden'] as const) {
      const repo = makeRepo();
      ok(runHook(repo, begin('chat-1')));
      ok(runHook(repo, stop('chat-1')));
      if (shape === 'nested') {
        const inner = path.join(repo, 'vendor', 'inner');
        fs.mkdirSync(inner, { recursive: true });
        git(inner, 'init', '-q');
      } else {
        git(repo, 'update-index', '--assume-unchanged', 'README.md');
      }
      write(repo, 'work.txt', 'partial work\n');
      const before = contentInventory(repo);
      const r = runHook(repo, begin('chat-1', `beside a ${shape} entry`));
      assert.equal(r.path, `declined:${shape}`);
      const { turnId } = ok(r);
      assert.deepEqual(
        git(repo, 'for-each-ref', '--format=%(refname)', 'refs/agent-versions/base/').trim().split('\n'),
        [`refs/agent-versions/base/${turnId}`],
        shape,
      );
      assertNothingLost(repo, before);
    }
  });

  it("a Stop that makes a version (from a clean base and from a dirty begin's snapshot) commits and records exactly what the full path does", async () => {
    const [fastRepo, slowRepo] = [makeRepo(), makeRepo()];
    const paths: Record<string, (string | undefined)[]> = { fast: [], slow: [] };
    const results: Record<string, HookJson[]> = { fast: [], slow: [] };
    const befores: Record<string, Set<string>> = {};
    for (const [name, repo, fast] of [
      ['fast', fastRepo, true],
      ['slow', slowRepo, false],
    ] as const) {
      const step = (payload: Record<string, unknown>) => {
        const r = runHook(repo, payload, { fast });
        paths[name].push(r.path);
        results[name].push(ok(r));
      };
      write(repo, 'old.txt', 'to be deleted\n');
      git(repo, 'add', 'old.txt');
      git(repo, 'commit', '-q', '-m', 'the user adds a file');
      step(begin('chat-1', 'first'));
      step(stop('chat-1'));
      step(begin('chat-1', 'Edit the readme\nand more lines of the prompt'));
      write(repo, 'README.md', '# demo, by the agent\n');
      write(repo, 'src/new.ts', 'export const n = 1;\n');
      fs.rmSync(path.join(repo, 'old.txt'));
      ok(
        runHook(
          repo,
          {
            hook_event_name: 'PostToolUse',
            session_id: 'chat-1',
            tool_name: 'Write',
            tool_input: { file_path: path.join(repo, 'src/new.ts') },
          },
          { fast },
        ),
      );
      step(stop('chat-1'));
      // The user's own edit, staged, then a turn begun on that dirty tree whose version is made from its snapshot.
      write(repo, 'user.txt', 'the user\n');
      git(repo, 'add', 'user.txt');
      step(begin('chat-1', 'second'));
      write(repo, 'src/new.ts', 'export const n = 2;\n');
      befores[name] = contentInventory(repo);
      step(stop('chat-1'));
    }
    assert.deepEqual(paths.slow, Array(6).fill('declined:switched-off'));
    assert.deepEqual(paths.fast, ['declined:no-facts', ...Array(5).fill('fast engines=0')]);
    const shape = (r: HookJson) => ({
      ...r,
      turnId: typeof r.turnId,
      version: typeof r.version,
      cancelled: r.cancelled?.length,
    });
    assert.deepEqual(results.fast.map(shape), results.slow.map(shape));
    assert.equal(typeof results.fast[3].version, 'string');
    assert.equal(typeof results.fast[5].version, 'string');
    assert.deepEqual(await rows(fastRepo), await rows(slowRepo));
    const picture = (name: 'fast' | 'slow', repo: string) => {
      const ids = new Map<string, string>();
      const normal = (text: string) =>
        text.replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, (id) => {
          if (!ids.has(id)) ids.set(id, `<id ${ids.size}>`);
          return ids.get(id)!;
        });
      return {
        // Each commit's tree and message, and the branch's reflog subjects.
        log: normal(git(repo, 'log', '--format=%T%n%B', 'HEAD')).replace(
          /Agent-Staged: ([0-9a-f]{40})/g,
          (_, c: string) => `Agent-Staged: <tree ${git(repo, 'rev-parse', `${c}^{tree}`).trim()}>`,
        ),
        reflog: git(repo, 'reflog', '--format=%gs', 'refs/heads/main'),
        index: git(repo, 'ls-files', '-s', '--debug').replace(/^\s+(ctime|mtime|dev|uid|size):.*\n/gm, ''),
        status: git(repo, 'status', '--porcelain=v1', '--untracked-files=all'),
        refs: git(repo, 'for-each-ref', '--format=%(refname) %(objectname)', 'refs/agent-versions/')
          .split('\n')
          .filter(Boolean)
          .map((line) => {
            const [ref, oid] = line.split(' ');
            return normal(
              `${ref.replace(/\/staged\/[0-9a-f]{40}$/, '/staged/<commit>')} <tree ${git(repo, 'rev-parse', `${oid}^{tree}`).trim()}>`,
            );
          }),
        toolWrites: fs
          .readdirSync(path.join(repo, '.git', 'agent-versions', 'tool-writes'), { recursive: true })
          .map((f) => normal(String(f)))
          .sort(),
        turn: results[name][3].turnId !== undefined,
      };
    };
    assert.deepEqual(picture('fast', fastRepo), picture('slow', slowRepo));
    assert.equal(git(fastRepo, 'status', '--porcelain'), '', 'the index followed the version');
    assert.equal(git(fastRepo, 'show', 'HEAD:src/new.ts'), 'export const n = 2;\n');
    assert.equal(git(fastRepo, 'log', '-1', '--format=%s', 'HEAD~1'), '[Agent] Edit the readme\n');
    assertNothingLost(fastRepo, befores.fast);
    assertNothingLost(slowRepo, befores.slow);
  });

  it('a Stop while another chat has a running turn declines before writing anything: the full path makes the version', async () => {
    const repo = makeRepo();
    ok(runHook(repo, begin('chat-1')));
    ok(runHook(repo, stop('chat-1')));
    ok(runHook(repo, begin('chat-2')));
    ok(runHook(repo, stop('chat-2')));
    assert.equal(runHook(repo, begin('chat-1', 'one')).path, 'fast engines=0');
    assert.equal(runHook(repo, begin('chat-2', 'two')).path, 'fast engines=0');
    write(repo, 'a.txt', 'a\n');
    const before = contentInventory(repo);
    const journal = path.join(repo, '.git', 'agent-versions', 'state.journal');
    const r = runHook(repo, stop('chat-1'));
    assert.equal(r.path, 'declined:other-chat-running');
    assert.equal(typeof ok(r).version, 'string');
    assert.ok(fs.statSync(journal).size > 0);
    assert.deepEqual((await runningTurns(repo)).length, 1);
    assertNothingLost(repo, before);
  });

  it('declines while recovery is required: the full path refuses the begin and nothing is recorded', async () => {
    const repo = makeRepo();
    ok(runHook(repo, begin('chat-1')));
    await seedRecoveryLatch(repo, 'op-1');
    // Stale (the latch was written since): the full path ends the turn and keeps facts that name the latch.
    assert.equal(runHook(repo, stop('chat-1')).path, 'declined:stale');
    const turnsBefore = (await rows(repo)).turns;
    const refused = runHook(repo, begin('chat-1'));
    assert.equal(refused.path, 'declined:unsettled');
    assert.ok(refused.code !== 0 && refused.code !== 2, `exit ${refused.code}`);
    assert.match(refused.stderr, /Version restore needs attention/);
    assert.deepEqual((await rows(repo)).turns, turnsBefore);
  });

  it('an end without a running turn is ignored without taking a lock or writing, as the full path ignores it', () => {
    const repo = makeRepo();
    ok(runHook(repo, begin('chat-1')));
    ok(runHook(repo, stop('chat-1')));
    const journal = path.join(repo, '.git', 'agent-versions', 'state.journal');
    const size = fs.statSync(journal).size;
    const again = runHook(repo, stop('chat-1'));
    assert.equal(again.path, 'fast engines=0');
    assert.equal(ok(again).action, 'ignored');
    assert.equal(fs.statSync(journal).size, size);
  });

  it('a facts file that is damaged or names another repository is not trusted', () => {
    const repo = makeRepo();
    ok(runHook(repo, begin('chat-1')));
    const file = path.join(repo, '.git', 'agent-versions', HOOK_FACTS_FILE);
    const facts = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;
    fs.writeFileSync(file, JSON.stringify({ ...facts, root: '/elsewhere' }));
    assert.equal(runHook(repo, stop('chat-1')).path, 'declined:no-facts');
    fs.writeFileSync(file, '{"format":1,');
    const damaged = runHook(repo, begin('chat-1'));
    assert.equal(damaged.path, 'declined:no-facts');
    assert.equal(ok(damaged).action, 'began');
  });
});

describe('hook events named like Object.prototype members: ignored on both paths, nothing changed', function () {
  this.timeout(300_000);
  after(cleanupTempDirs);

  /** `hook <agent> --json` through the entry, in every agent's snake_case payload shape. */
  function agentHook(repo: string, agent: string, event: string, fast: boolean, prompt?: string): Hook {
    const log = path.join(tempDir('avh-hooklog-'), `path-${logSeq++}.log`);
    const payload = { hook_event_name: event, session_id: 's1', cwd: repo, ...(prompt ? { prompt } : {}) };
    const r = spawnSync(process.execPath, [ENTRY, 'hook', agent, '--json'], {
      cwd: repo,
      input: JSON.stringify(payload),
      encoding: 'utf8',
      // Not Copilot CLI's process, whatever runs these tests (claude-code leaves COPILOT_CLI=1 events to copilot).
      env: { ...testGitEnv(), COPILOT_CLI: '', AVH_HOOK_PATH_LOG: log, ...(fast ? {} : { AVH_HOOK_FAST: 'off' }) },
      timeout: 60_000,
    });
    const logged = fs.existsSync(log) ? fs.readFileSync(log, 'utf8').trim() : undefined;
    return { code: r.status ?? (r.signal ? -1 : -2), stdout: r.stdout, stderr: r.stderr, path: logged };
  }

  /** The agent's events that begin a turn and end it completed, from its table (agents/registry.ts). */
  const eventOf = (agent: Agent, effect: 'begin' | 'completed') => [...agent.events].find(([, e]) => e === effect)![0];

  // Every agent of the registry: a new one is covered without touching this file.
  for (const agent of AGENTS) {
    it(`hook ${agent.name}: an unknown event name, toString, __proto__ and constructor exit 0 as ignored events, on the fast and the full path`, async () => {
      const repo = makeRepo();
      const begin = eventOf(agent, 'begin');
      ok(agentHook(repo, agent.name, begin, true, 'do the thing'));
      ok(agentHook(repo, agent.name, begin, true, 'do the thing')); // the chat is in the facts now, with a running turn
      const stateDir = path.join(repo, '.git', 'agent-versions');
      const picture = () => ({
        journal: fs.readFileSync(path.join(stateDir, 'state.journal')).toString('base64'),
        facts: fs.readFileSync(path.join(stateDir, HOOK_FACTS_FILE), 'utf8'),
      });
      const before = { ...picture(), rows: await rows(repo), running: await runningTurns(repo) };
      assert.equal(before.running.length, 1);
      for (const event of ['NoSuchEvent', 'toString', '__proto__', 'constructor', 'hasOwnProperty', 'valueOf']) {
        for (const fast of [true, false]) {
          const r = agentHook(repo, agent.name, event, fast);
          const answer = ok(r);
          assert.equal(answer.action, 'ignored', `${event}: ${r.stdout}`);
          // The fast path answers an event we do not act on itself, as the full path would: nothing opened.
          assert.equal(r.path, fast ? 'fast engines=0' : 'declined:switched-off', event);
          assert.deepEqual(picture(), { journal: before.journal, facts: before.facts }, event);
        }
      }
      assert.deepEqual(await rows(repo), before.rows);
      assert.deepEqual(await runningTurns(repo), before.running);
      // The facts are still trusted: the real end takes the fast path.
      const stop = agentHook(repo, agent.name, eventOf(agent, 'completed'), true);
      assert.equal(ok(stop).action, 'ended');
      assert.equal(stop.path, 'fast engines=0');
    });
  }
});

describe('hook fast path: the journal append (in process, real store files)', function () {
  this.timeout(60_000);
  after(cleanupTempDirs);

  it('never appends when the journal changed since the state was seen, nor when the record would make a compaction due', async () => {
    const dir = tempDir('avh-append-');
    const { store } = await DurableStore.open(dir);
    try {
      await store.transaction((tx) => tx.run("INSERT INTO meta (key, value) VALUES ('probe', '0')"));
      const seen = (await store.readWithJournalState(() => null)).journal;
      await store.transaction((tx) => tx.run("UPDATE meta SET value = '1' WHERE key = 'probe'"));
      const journal = path.join(dir, 'state.journal');
      const size = fs.statSync(journal).size;
      assert.deepEqual(
        await appendRecordIfUnchanged(dir, seen, [{ sql: "UPDATE meta SET value = 'x' WHERE key = 'probe'" }], 1000),
        { kind: 'stale' },
      );
      assert.equal(fs.statSync(journal).size, size);

      const current = (await store.readWithJournalState(() => null)).journal;
      const appended = await appendRecordIfUnchanged(
        dir,
        current,
        [{ sql: "UPDATE meta SET value = '2' WHERE key = 'probe'" }],
        1000,
      );
      assert.equal(appended.kind, 'appended');
      assert.equal(
        await store.read((r) => r.get<{ value: string }>("SELECT value FROM meta WHERE key = 'probe'")?.value),
        '2',
      );
      const after = (await store.readWithJournalState(() => null)).journal;
      assert.deepEqual(after, appended.kind === 'appended' ? appended.state : null);

      // 99 records since the journal's base: a 100th would make a compaction due, which only the full store does.
      let state = after;
      while (state.lastSeq - state.baseSeq < 99) {
        await store.transaction((tx) => tx.run("UPDATE meta SET value = value + 1 WHERE key = 'probe'"));
        state = (await store.readWithJournalState(() => null)).journal;
      }
      const full = fs.statSync(journal).size;
      assert.deepEqual(
        await appendRecordIfUnchanged(dir, state, [{ sql: "UPDATE meta SET value = 'x' WHERE key = 'probe'" }], 1000),
        { kind: 'compaction-due' },
      );
      assert.equal(fs.statSync(journal).size, full);
    } finally {
      await store.close();
    }
  });

  it('the full path still compacts: the event whose record would make a compaction due goes to the full path', async () => {
    const repo = makeRepo();
    ok(runHook(repo, begin('chat-1')));
    const dir = path.join(repo, '.git', 'agent-versions');
    // Real records from another process's store until the journal is near the threshold (100 records).
    const { store } = await DurableStore.open(dir);
    try {
      await store.transaction((tx) => tx.run("INSERT INTO meta (key, value) VALUES ('filler', '0')"));
      for (
        let state = (await store.readWithJournalState(() => null)).journal;
        state.lastSeq - state.baseSeq < 92;
        state = (await store.readWithJournalState(() => null)).journal
      ) {
        await store.transaction((tx) => tx.run("UPDATE meta SET value = value + 1 WHERE key = 'filler'"));
      }
    } finally {
      await store.close();
    }
    const paths: (string | undefined)[] = [];
    for (let i = 0; i < 16 && !paths.includes('declined:compaction-due'); i++)
      paths.push(runHook(repo, i % 2 === 0 ? stop('chat-1') : begin('chat-1')).path);
    assert.equal(paths[0], 'declined:stale');
    assert.ok(paths.includes('fast engines=0'), paths.join(', '));
    assert.equal(paths[paths.length - 1], 'declined:compaction-due', paths.join(', '));
    const { store: reopened } = await DurableStore.open(dir);
    try {
      const journal = (await reopened.readWithJournalState(() => null)).journal;
      assert.ok(journal.lastSeq - journal.baseSeq < 5, `compacted by the full path: ${JSON.stringify(journal)}`);
    } finally {
      await reopened.close();
    }
    assert.equal(runHook(repo, paths.length % 2 === 0 ? stop('chat-1') : begin('chat-1')).path, 'fast engines=0');
  });
});
