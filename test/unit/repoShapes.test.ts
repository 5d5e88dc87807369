/**
 * Issue 25: the repositories people really have. Each shape is a real repository and real git; each test asserts
 * that nothing is lost and the tree is exact, or that the command refused, named the file and changed nothing.
 * FINDINGS-shapes.md (branch lab/shapes) has the reproductions and root causes; docs/design/repositories.md the
 * decisions these tests pin. Shapes that belong to other parts of issue 25 (two chats in one tree, Undo of a
 * running turn, the shipped bundles) are tested beside their own fixes.
 */
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { VersionHistory } from '../../src/core/versionHistory';
import { expectReason, repoPicture } from '../support/assertions';
import {
  assertNothingLost,
  cleanupTempDirs,
  contentInventory,
  git,
  makeRepo,
  read,
  tempDir,
  write,
} from '../support/gitFixtures';
import {
  blobIdIn,
  commitAll,
  distCli,
  expectRefusalNaming,
  installLaggingFsmonitor,
  objectExists,
  runningAsRoot,
  treePaths,
  unprivileged,
} from '../support/repoShapes';

const clean = (repo: string) => git(repo, 'status', '--porcelain', '--untracked-files=all').trim() === '';
const show = (repo: string, rev: string, file: string) => git(repo, 'show', `${rev}:${file}`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function withHistory<T>(repo: string, fn: (history: VersionHistory) => Promise<T>): Promise<T> {
  const history = await VersionHistory.open(repo);
  try {
    return await fn(history);
  } finally {
    await history.close();
  }
}

/** One Claude Code hook event through the shipped bundle, from its captured payload with `cwd` set to `repo`. */
function claudeHook(repo: string, name: string): { action: string; version?: string | null } {
  const file = path.resolve(__dirname, '../../../test/fixtures/hooks/claude-code', name);
  const input = JSON.stringify({ ...(JSON.parse(fs.readFileSync(file, 'utf8')) as object), cwd: repo });
  const r = distCli(['hook', 'claude-code', '--json'], { cwd: path.dirname(repo), input });
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout) as { action: string; version?: string | null };
}

describe('repository shapes people really have (issue 25; real git, real store)', function () {
  this.timeout(120_000);
  afterEach(cleanupTempDirs);

  // ---------------------------------------------------------------------------------------------------------
  describe('content that is lost today', () => {
    for (const flag of ['--skip-worktree', '--assume-unchanged'] as const) {
      it(`a tracked file marked ${flag} with a local edit: Undo gives the local edit back, the branch never holds it, the flag stays`, async () => {
        const repo = makeRepo();
        write(repo, 'config.ini', 'db=prod\n');
        commitAll(repo, 'config');
        git(repo, 'update-index', flag, 'config.ini');
        write(repo, 'config.ini', 'db=local tweak\n');
        await withHistory(repo, async (history) => {
          const { turnId, baseCommit } = await history.beginTurn({ chatId: 'c', prompt: 'edit config' });
          // The decision (docs/design/repositories.md): the branch never holds a local-only file's content;
          // the base snapshot keeps it in its local layer.
          assert.equal(show(repo, baseCommit, 'config.ini'), 'db=prod\n');
          assert.equal(
            show(repo, `refs/agent-versions/local/${baseCommit}`, 'config.ini'),
            'db=local tweak\n',
            'the base snapshot’s local layer holds the local edit',
          );
          write(repo, 'config.ini', 'db=agent rewrite\n');
          write(repo, 'other.txt', 'agent\n');
          const before = contentInventory(repo);
          assert.ok((await history.endTurn(turnId, 'completed')).version);
          assert.equal((await history.undo()).result, 'restored');
          assert.equal(read(repo, 'config.ini'), 'db=local tweak\n', 'the local edit is back');
          assert.equal(fs.existsSync(path.join(repo, 'other.txt')), false);
          const branchBlobs = git(repo, 'log', '--format=%H', 'main').trim().split('\n');
          for (const commit of branchBlobs)
            if (treePaths(repo, commit).includes('config.ini'))
              assert.notEqual(
                show(repo, commit, 'config.ini'),
                'db=local tweak\n',
                'a local-only edit never lands on the branch',
              );
          assert.match(git(repo, 'ls-files', '-v', 'config.ini'), flag === '--skip-worktree' ? /^S / : /^h /);
          assertNothingLost(repo, before); // the agent's rewrite stays reachable too
          assert.equal((await history.redo()).result, 'restored');
          assert.equal(read(repo, 'config.ini'), 'db=agent rewrite\n', 'Redo gives the agent’s rewrite back');
          assert.equal(read(repo, 'other.txt'), 'agent\n');
          assert.match(git(repo, 'ls-files', '-v', 'config.ini'), flag === '--skip-worktree' ? /^S / : /^h /);
        });
      });

      it(`a turn that rewrote only a ${flag} file is a version, and Undo gives the local edit back`, async () => {
        const repo = makeRepo();
        write(repo, 'config.ini', 'db=prod\n');
        commitAll(repo, 'config');
        git(repo, 'update-index', flag, 'config.ini');
        write(repo, 'config.ini', 'db=local tweak\n');
        await withHistory(repo, async (history) => {
          const { turnId } = await history.beginTurn({ chatId: 'c', prompt: 'edit config' });
          write(repo, 'config.ini', 'db=agent rewrite\n');
          const { version } = await history.endTurn(turnId, 'completed');
          assert.ok(version, 'the rewrite is a version (its local layer holds it)');
          assert.equal(show(repo, `refs/agent-versions/local/${version}`, 'config.ini'), 'db=agent rewrite\n');
          assert.equal((await history.undo()).result, 'restored');
          assert.equal(read(repo, 'config.ini'), 'db=local tweak\n');
          assert.equal((await history.status()).recovery, null);
        });
      });

      it(`a ${flag} file edited after the turn: Undo refuses, naming it, and changes nothing`, async () => {
        const repo = makeRepo();
        write(repo, 'config.ini', 'db=prod\n');
        commitAll(repo, 'config');
        git(repo, 'update-index', flag, 'config.ini');
        write(repo, 'config.ini', 'db=local tweak\n');
        await withHistory(repo, async (history) => {
          const { turnId } = await history.beginTurn({ chatId: 'c', prompt: 'edit config' });
          write(repo, 'config.ini', 'db=agent rewrite\n');
          assert.ok((await history.endTurn(turnId, 'completed')).version);
          write(repo, 'config.ini', 'db=the user, after the turn\n');
          const before = contentInventory(repo);
          await expectRefusalNaming(repo, history.undo(), 'config.ini');
          assert.equal(read(repo, 'config.ini'), 'db=the user, after the turn\n');
          assert.equal((await history.status()).recovery, null);
          assertNothingLost(repo, before);
        });
      });
    }

    it('through the shipped hook (Claude Code’s captured payloads): a --skip-worktree local edit survives the turn and Undo', () => {
      const repo = makeRepo();
      write(repo, 'config.ini', 'db=prod\n');
      commitAll(repo, 'config');
      git(repo, 'update-index', '--skip-worktree', 'config.ini');
      write(repo, 'config.ini', 'db=local tweak\n');
      const hook = (name: string) => claudeHook(repo, name);
      // The probe says "clean" beside a hidden entry: the fast path declines and the full path snapshots it.
      assert.equal(hook('UserPromptSubmit.json').action, 'began');
      write(repo, 'config.ini', 'db=agent rewrite\n');
      write(repo, 'other.txt', 'agent\n');
      const before = contentInventory(repo);
      const ended = hook('Stop.json');
      assert.equal(ended.action, 'ended');
      assert.ok(ended.version, 'a version');
      const undo = distCli(['undo', '--json'], { cwd: repo });
      assert.equal(undo.code, 0, undo.stdout + undo.stderr);
      assert.equal(read(repo, 'config.ini'), 'db=local tweak\n', 'the local edit is back');
      assert.equal(fs.existsSync(path.join(repo, 'other.txt')), false);
      assert.match(git(repo, 'ls-files', '-v', 'config.ini'), /^S /);
      assertNothingLost(repo, before);
    });

    it('core.ignoreStat=true: the pre-turn edit is in the base, the agent’s rewrite in the version, Undo gives the edit back', async () => {
      const repo = makeRepo();
      git(repo, 'config', 'core.ignoreStat', 'true');
      write(repo, 'a.txt', 'v1\n');
      commitAll(repo, 'a'); // git marks a.txt "assume unchanged" itself under ignoreStat
      write(repo, 'a.txt', 'v2 the user edited, longer\n');
      const before = contentInventory(repo);
      await withHistory(repo, async (history) => {
        const { turnId, baseCommit } = await history.beginTurn({ chatId: 'c', prompt: 'edit a' });
        assert.equal(show(repo, baseCommit, 'a.txt'), 'v2 the user edited, longer\n');
        write(repo, 'a.txt', 'agent\n');
        const { version } = await history.endTurn(turnId, 'completed');
        assert.ok(version);
        assert.equal(show(repo, version, 'a.txt'), 'agent\n');
        assert.equal((await history.undo()).result, 'restored');
        assert.equal(read(repo, 'a.txt'), 'v2 the user edited, longer\n');
        assertNothingLost(repo, before);
      });
    });

    it('a lagging fsmonitor: an edit made just before Undo is refused, naming the file, never overwritten', async () => {
      const repo = makeRepo();
      write(repo, 'a.txt', 'v1\n');
      commitAll(repo, 'a');
      const monitor = installLaggingFsmonitor(repo);
      await withHistory(repo, async (history) => {
        const { turnId } = await history.beginTurn({ chatId: 'c', prompt: 'edit a' });
        write(repo, 'a.txt', 'agent v2\n');
        assert.ok((await history.endTurn(turnId, 'completed')).version);
        git(repo, 'status', '--porcelain'); // an editor refreshing the index: the monitor's bits are set again
        monitor.lag(true);
        await sleep(1100); // a later second than the index: nothing about racy entries helps git here
        write(repo, 'a.txt', 'the user typed this just before Undo\n');
        // git itself, trusting the monitor, sees nothing: every git process of ours looks at the files.
        assert.equal(git(repo, 'status', '--porcelain').trim(), '');
        const before = contentInventory(repo);
        const picture = repoPicture(repo);
        const refused = await expectReason(history.undo(), 'dirty-conflict');
        assert.match(refused.message, /uncommitted changes \(a\.txt\)/, 'the refusal names the file');
        assert.match(refused.message, /Nothing was changed/);
        assert.deepEqual(repoPicture(repo), picture, 'nothing changed');
        assert.equal(read(repo, 'a.txt'), 'the user typed this just before Undo\n');
        assertNothingLost(repo, before);
      });
    });
    it('a lagging fsmonitor at turn begin through the shipped hook: the user’s edit is in the base, Undo gives it back', async () => {
      const repo = makeRepo();
      write(repo, 'a.txt', 'v1\n');
      commitAll(repo, 'a');
      const monitor = installLaggingFsmonitor(repo);
      monitor.lag(true);
      await sleep(1100); // a later second than the index: nothing about racy entries helps git here
      write(repo, 'a.txt', 'the user’s edit, before the prompt\n');
      assert.equal(git(repo, 'status', '--porcelain').trim(), '', 'git, trusting the monitor, sees a clean tree');
      // The fast path would take a clean tree's HEAD as the base; it must see the edit and snapshot it.
      assert.equal(claudeHook(repo, 'UserPromptSubmit.json').action, 'began');
      write(repo, 'a.txt', 'agent rewrite\n');
      const before = contentInventory(repo);
      assert.ok(claudeHook(repo, 'Stop.json').version, 'a version');
      const undo = distCli(['undo', '--json'], { cwd: repo });
      assert.equal(undo.code, 0, undo.stdout + undo.stderr);
      assert.equal(read(repo, 'a.txt'), 'the user’s edit, before the prompt\n');
      assertNothingLost(repo, before);
    });
    it('a lagging fsmonitor at turn end: the version still holds the agent’s edit', async () => {
      const repo = makeRepo();
      write(repo, 'a.txt', 'v1\n');
      commitAll(repo, 'a');
      const monitor = installLaggingFsmonitor(repo);
      await withHistory(repo, async (history) => {
        const { turnId } = await history.beginTurn({ chatId: 'c', prompt: 'edit a' });
        monitor.lag(true);
        await sleep(1100);
        write(repo, 'a.txt', 'agent v2\n');
        const { version } = await history.endTurn(turnId, 'completed');
        assert.ok(version, 'a version is made');
        assert.equal(show(repo, version, 'a.txt'), 'agent v2\n');
      });
    });
  });

  // ---------------------------------------------------------------------------------------------------------
  describe('a transient index.lock (an editor refreshing the index)', () => {
    /** Holds .git/index.lock for `ms`, as another git process would. */
    const holdIndexLock = (repo: string, ms: number) => {
      const lock = path.join(repo, '.git', 'index.lock');
      fs.writeFileSync(lock, '');
      return sleep(ms).then(() => fs.rmSync(lock, { force: true }));
    };

    it('at turn end: the version is made (waited for, or made through the temporary index)', async () => {
      const repo = makeRepo();
      await withHistory(repo, async (history) => {
        const { turnId } = await history.beginTurn({ chatId: 'c', prompt: 'agent' });
        write(repo, 'a.txt', 'agent\n');
        const released = holdIndexLock(repo, 400);
        const end = await history.endTurn(turnId, 'completed');
        await released;
        assert.ok(end.version, `no version: ${end.message ?? end.reason}`);
        assert.equal(show(repo, 'HEAD', 'a.txt'), 'agent\n');
        assert.equal((await history.undo()).result, 'restored', 'and it can be undone');
        assert.ok(clean(repo));
      });
    });

    it('at turn begin on a dirty tree: the turn is recorded with the exact pre-turn state', async () => {
      const repo = makeRepo();
      write(repo, 'README.md', '# demo\nmy edit\n');
      await withHistory(repo, async (history) => {
        const released = holdIndexLock(repo, 400);
        const begun = await history.beginTurn({ chatId: 'c', prompt: 'agent' });
        await released;
        assert.equal(show(repo, begun.baseCommit, 'README.md'), '# demo\nmy edit\n');
      });
    });

    it('held throughout turn end (a stale lock): the version is made, and the index follows once the lock is gone', async () => {
      const repo = makeRepo();
      await withHistory(repo, async (history) => {
        const { turnId } = await history.beginTurn({ chatId: 'c', prompt: 'agent' });
        write(repo, 'a.txt', 'agent\n');
        const lock = path.join(repo, '.git', 'index.lock');
        fs.writeFileSync(lock, '');
        const before = contentInventory(repo);
        const end = await history.endTurn(turnId, 'completed');
        assert.ok(end.version, `no version: ${end.message ?? end.reason}`);
        assert.equal(fs.readFileSync(lock, 'utf8'), '', 'another process’s lock is never touched');
        fs.rmSync(lock);
        // The next command settles the index the commit path could not install (its repair marker).
        assert.equal((await history.undo()).result, 'restored');
        assert.ok(clean(repo));
        assertNothingLost(repo, before);
      });
    });

    it('at Undo: a lock held for a moment is waited for and the Undo restores; one that stays is refused, nothing changed', async () => {
      const repo = makeRepo();
      await withHistory(repo, async (history) => {
        const { turnId } = await history.beginTurn({ chatId: 'c', prompt: 'agent' });
        write(repo, 'a.txt', 'agent\n');
        assert.ok((await history.endTurn(turnId, 'completed')).version);
        const lock = path.join(repo, '.git', 'index.lock');
        fs.writeFileSync(lock, '');
        const picture = repoPicture(repo);
        await expectReason(history.undo(), 'index-locked');
        assert.deepEqual(repoPicture(repo), picture, 'a lock that stays: refused, nothing changed');
        fs.rmSync(lock);
        const before = contentInventory(repo);
        const released = holdIndexLock(repo, 400);
        const undo = await history.undo();
        await released;
        assert.equal(undo.result, 'restored');
        assert.equal(fs.existsSync(path.join(repo, 'a.txt')), false);
        assert.ok(clean(repo));
        assertNothingLost(repo, before);
      });
    });

    it('a completed turn whose version could not be made is undone like a cancelled one: its work is saved first', async () => {
      const repo = makeRepo();
      write(repo, 'README.md', '# demo\nthe user, before the turn\n');
      await withHistory(repo, async (history) => {
        const { turnId, baseCommit } = await history.beginTurn({ chatId: 'c', prompt: 'agent' });
        write(repo, 'README.md', '# demo\nthe agent rewrote it\n');
        write(repo, 'a.txt', 'agent\n');
        // Any failure to record does it (a lock that outlasted every wait, a hook, git failing): a refusing hook
        // is the one a test can make on purpose.
        const hook = path.join(repo, '.git', 'hooks', 'reference-transaction');
        write(repo, '.git/hooks/reference-transaction', '#!/bin/sh\n[ "$1" = prepared ] && exit 1\nexit 0\n');
        fs.chmodSync(hook, 0o755);
        const end = await history.endTurn(turnId, 'completed');
        assert.equal(end.version, null);
        fs.rmSync(hook);
        const before = contentInventory(repo);
        const undo = await history.undo();
        assert.equal(undo.result, 'restored');
        assert.ok(undo.preserved, 'the turn’s work was saved first');
        assert.equal(show(repo, undo.preserved, 'a.txt'), 'agent\n');
        assert.equal(show(repo, undo.preserved, 'README.md'), '# demo\nthe agent rewrote it\n');
        assert.equal(
          git(repo, 'rev-parse', 'HEAD^{tree}').trim(),
          git(repo, 'rev-parse', `${baseCommit}^{tree}`).trim(),
        );
        assert.equal(read(repo, 'README.md'), '# demo\nthe user, before the turn\n');
        assert.equal(fs.existsSync(path.join(repo, 'a.txt')), false);
        assert.ok(clean(repo));
        assertNothingLost(repo, before);
      });
    });
  });

  // ---------------------------------------------------------------------------------------------------------
  describe('sparse checkout, SHA-256, filters, encodings, case and line endings', () => {
    it('sparse checkout (cone): a turn that writes outside the cone becomes a version, and the next turn begins', async () => {
      const repo = makeRepo();
      write(repo, 'app/a.txt', 'app\n');
      write(repo, 'lib/l.txt', 'lib\n');
      write(repo, 'lib/other.txt', 'keep\n');
      commitAll(repo, 'tree');
      git(repo, 'sparse-checkout', 'set', '--cone', 'app');
      await withHistory(repo, async (history) => {
        const { turnId } = await history.beginTurn({ chatId: 'c', prompt: 'write outside the cone' });
        write(repo, 'lib/new.txt', 'agent, outside the cone\n');
        write(repo, 'lib/l.txt', 'agent edit, outside the cone\n');
        write(repo, 'app/b.txt', 'agent, inside\n');
        const end = await history.endTurn(turnId, 'completed');
        assert.ok(end.version, `no version: ${end.message ?? end.reason}`);
        assert.deepEqual(treePaths(repo, end.version).sort(), [
          '.gitignore',
          'README.md',
          'app/a.txt',
          'app/b.txt',
          'lib/l.txt',
          'lib/new.txt',
          'lib/other.txt',
        ]);
        assert.equal(show(repo, end.version, 'lib/other.txt'), 'keep\n', 'entries outside the cone stay as they were');
        const next = await history.beginTurn({ chatId: 'c', prompt: 'next' });
        await history.endTurn(next.turnId, 'completed');
        assert.equal((await history.undo(turnId)).result, 'restored');
        assert.equal(
          fs.existsSync(path.join(repo, 'lib')),
          false,
          'back to the pre-turn files: nothing outside the cone',
        );
      });
    });

    describe('a SHA-256 repository', () => {
      const sha256Repo = () => {
        const repo = tempDir('avh-sha256-');
        git(repo, 'init', '-q', '-b', 'main', '--object-format=sha256');
        git(repo, 'config', 'user.name', 'Test User');
        git(repo, 'config', 'user.email', 'test@example.com');
        git(repo, 'config', 'commit.gpgsign', 'false');
        return repo;
      };

      it('begin on a dirty tree records the exact pre-turn state', async () => {
        const repo = sha256Repo();
        write(repo, 'README.md', 'v1\n');
        commitAll(repo, 'initial');
        write(repo, 'README.md', 'v1\nmy edit\n');
        await withHistory(repo, async (history) => {
          const { baseCommit } = await history.beginTurn({ chatId: 'c', prompt: 'p' });
          assert.equal(baseCommit.length, 64);
          assert.equal(show(repo, baseCommit, 'README.md'), 'v1\nmy edit\n');
        });
      });

      it('the first turn of an unborn repository holding files makes the [Base] root commit', async () => {
        const repo = sha256Repo();
        write(repo, 'hello.txt', 'hello\n');
        await withHistory(repo, async (history) => {
          const { turnId, baseCommit } = await history.beginTurn({ chatId: 'c', prompt: 'first' });
          assert.equal(
            git(repo, 'log', '-1', '--format=%s', baseCommit).trim(),
            '[Base] Files before the first agent turn',
          );
          write(repo, 'agent.txt', 'agent\n');
          assert.ok((await history.endTurn(turnId, 'completed')).version);
          assert.equal((await history.undo()).result, 'restored');
          assert.deepEqual(fs.readdirSync(repo).sort(), ['.git', 'hello.txt']);
        });
      });

      it('Undo Only This Turn of a symlink change completes (no recovery: the postcondition hashes in SHA-256)', async () => {
        const repo = sha256Repo();
        write(repo, 'README.md', 'readme\n');
        fs.symlinkSync('README.md', path.join(repo, 'link'));
        commitAll(repo, 'link');
        await withHistory(repo, async (history) => {
          const a = await history.beginTurn({ chatId: 'c1', prompt: 'retarget link' });
          fs.rmSync(path.join(repo, 'link'));
          fs.symlinkSync('elsewhere', path.join(repo, 'link'));
          await history.endTurn(a.turnId, 'completed');
          const b = await history.beginTurn({ chatId: 'c2', prompt: 'later' });
          write(repo, 'later.txt', 'later\n');
          await history.endTurn(b.turnId, 'completed');
          assert.equal((await history.undo(a.turnId, { only: 'turn' })).result, 'restored');
          assert.equal(fs.readlinkSync(path.join(repo, 'link')), 'README.md');
          assert.equal((await history.status()).recovery, null);
        });
      });
    });

    it('a failing smudge filter: Undo refuses before it writes, naming the file (never "restored" with the stored form)', async () => {
      const repo = makeRepo();
      git(repo, 'config', 'filter.b64.clean', 'base64');
      git(repo, 'config', 'filter.b64.smudge', 'base64 -d');
      write(repo, '.gitattributes', '*.dat filter=b64\n');
      write(repo, 'data.dat', 'plain v1\n');
      commitAll(repo, 'data');
      await withHistory(repo, async (history) => {
        const { turnId } = await history.beginTurn({ chatId: 'c', prompt: 'edit data' });
        write(repo, 'data.dat', 'plain v2 by the agent\n');
        await history.endTurn(turnId, 'completed');
        git(repo, 'config', 'filter.b64.smudge', 'false'); // the tool behind the filter is gone
        const before = contentInventory(repo);
        // Refused before anything moves: read-tree would exit 0 with the stored (base64) form in the file.
        const error = await expectRefusalNaming(repo, history.undo(), 'data.dat');
        assert.equal(error.reason, 'filter-failed');
        assert.match(error.message, /smudge filter 'b64'/);
        assert.equal(read(repo, 'data.dat'), 'plain v2 by the agent\n');
        assert.equal((await history.status()).recovery, null);
        assertNothingLost(repo, before);
        git(repo, 'config', 'filter.b64.smudge', 'base64 -d'); // fixed: Undo writes the smudged content
        assert.equal((await history.undo()).result, 'restored');
        assert.equal(read(repo, 'data.dat'), 'plain v1\n');
      });
    });

    it('a failing smudge filter defined only in the global config (GIT_CONFIG_GLOBAL): still refused, naming the file', async () => {
      const repo = makeRepo();
      const global = path.join(tempDir('avh-global-'), 'gitconfig');
      fs.writeFileSync(global, '[filter "b64"]\n\tclean = base64\n\tsmudge = base64 -d\n');
      const saved = process.env.GIT_CONFIG_GLOBAL;
      process.env.GIT_CONFIG_GLOBAL = global;
      try {
        write(repo, '.gitattributes', '*.dat filter=b64\n');
        write(repo, 'data.dat', 'plain v1\n');
        commitAll(repo, 'data');
        await withHistory(repo, async (history) => {
          const { turnId } = await history.beginTurn({ chatId: 'c', prompt: 'edit data' });
          write(repo, 'data.dat', 'plain v2 by the agent\n');
          await history.endTurn(turnId, 'completed');
          fs.writeFileSync(global, '[filter "b64"]\n\tclean = base64\n\tsmudge = false\n');
          const before = contentInventory(repo);
          const error = await expectRefusalNaming(repo, history.undo(), 'data.dat');
          assert.equal(error.reason, 'filter-failed');
          assert.equal(read(repo, 'data.dat'), 'plain v2 by the agent\n');
          assertNothingLost(repo, before);
        });
      } finally {
        if (saved === undefined) delete process.env.GIT_CONFIG_GLOBAL;
        else process.env.GIT_CONFIG_GLOBAL = saved;
      }
    });

    it('log.showSignature=true: version ids stay ids, and a signed commit is not counted as later work', async function () {
      if (spawnSync('gpg', ['--version']).status !== 0) this.skip();
      const gnupg = tempDir('avh-gnupg-');
      fs.chmodSync(gnupg, 0o700);
      const saved = process.env.GNUPGHOME;
      process.env.GNUPGHOME = gnupg;
      try {
        const keygen = spawnSync('gpg', [
          '--batch',
          '--passphrase',
          '',
          '--quick-gen-key',
          'Test <t@e>',
          'ed25519',
          'sign',
          'never',
        ]);
        assert.equal(keygen.status, 0, keygen.stderr?.toString());
        const repo = makeRepo();
        write(repo, 's.txt', 'signed\n');
        git(repo, 'add', 's.txt');
        git(repo, '-c', 'commit.gpgsign=true', '-c', 'user.signingkey=t@e', 'commit', '-q', '-m', 'signed user commit');
        git(repo, 'config', 'log.showSignature', 'true');
        await withHistory(repo, async (history) => {
          const a = await history.beginTurn({ chatId: 'cA', prompt: 'A on a signed base' });
          write(repo, 'a.txt', 'a\n');
          await history.endTurn(a.turnId, 'completed');
          const b = await history.beginTurn({ chatId: 'cB', prompt: 'B' });
          write(repo, 'b.txt', 'b\n');
          await history.endTurn(b.turnId, 'completed');
          const versions = JSON.parse(distCli(['versions', '--json'], { cwd: repo }).stdout) as { oid: string }[];
          for (const v of versions) assert.match(v.oid, /^[0-9a-f]{40}$/);
          const error = await expectReason(history.undo(a.turnId), 'confirmation-required');
          assert.doesNotMatch(error.message, /of your commits/, 'the signed base is not "later work"');
        });
      } finally {
        if (saved === undefined) delete process.env.GNUPGHOME;
        else process.env.GNUPGHOME = saved;
      }
    });

    it('i18n.commitEncoding=ISO-8859-1: our subjects are not garbled (UTF-8, no encoding header)', async () => {
      const repo = makeRepo();
      git(repo, 'config', 'i18n.commitEncoding', 'ISO-8859-1');
      await withHistory(repo, async (history) => {
        const { turnId } = await history.beginTurn({ chatId: 'c', prompt: 'café – naïve ✓' });
        write(repo, 'a.txt', 'a\n');
        assert.ok((await history.endTurn(turnId, 'completed')).version);
      });
      assert.equal(git(repo, 'log', '-1', '--format=%s').trim(), '[Agent] café – naïve ✓');
      assert.doesNotMatch(git(repo, 'cat-file', 'commit', 'HEAD'), /^encoding /m);
    });

    it('core.ignorecase=true on a case-sensitive disk: a case-only rename is a rename, and Undo gives the old name back', async () => {
      const repo = makeRepo();
      write(repo, 'Foo.txt', 'content\n');
      commitAll(repo, 'Foo');
      git(repo, 'config', 'core.ignorecase', 'true');
      await withHistory(repo, async (history) => {
        const { turnId } = await history.beginTurn({ chatId: 'c', prompt: 'rename' });
        fs.renameSync(path.join(repo, 'Foo.txt'), path.join(repo, 'foo.txt'));
        const { version } = await history.endTurn(turnId, 'completed');
        assert.ok(version);
        assert.ok(treePaths(repo, version).includes('foo.txt'), 'the version holds the new name');
        assert.equal(treePaths(repo, version).includes('Foo.txt'), false);
        assert.equal((await history.undo()).result, 'restored');
        assert.deepEqual(
          fs.readdirSync(repo).filter((n) => /^foo\.txt$/i.test(n)),
          ['Foo.txt'],
        );
        assert.ok(clean(repo));
      });
    });

    it('core.autocrlf=true (documented decision): Undo writes what `git checkout` writes', async () => {
      const repo = makeRepo();
      write(repo, 'lf.txt', 'line1\nline2\n');
      commitAll(repo, 'lf');
      git(repo, 'config', 'core.autocrlf', 'true');
      await withHistory(repo, async (history) => {
        const { turnId } = await history.beginTurn({ chatId: 'c', prompt: 'edit' });
        write(repo, 'lf.txt', 'agent\n');
        await history.endTurn(turnId, 'completed');
        assert.equal((await history.undo()).result, 'restored');
      });
      // The decision (FINDINGS-shapes.md): versions hold git's stored form; restores write git's checkout form.
      assert.equal(read(repo, 'lf.txt'), 'line1\r\nline2\r\n');
      assert.ok(clean(repo));
    });
  });

  // ---------------------------------------------------------------------------------------------------------
  describe('secrets', () => {
    const SECRETS: Record<string, string> = {
      '.kube/config':
        'apiVersion: v1\nkind: Config\nusers:\n- name: admin\n  user:\n    client-key-data: LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQpNSUlFb3dJQkFBS0NBUUVB\n',
      'kubeconfig.yaml':
        'apiVersion: v1\nkind: Config\nusers:\n- name: ci\n  user:\n    token: 8a2f0c9e1b7d4e3f9a6c5b2d1e0f3a4b\n',
      '.envrc': 'export DATABASE_PASSWORD=hunter2-prod\n',
      '.git-credentials': 'https://alice:s3cr3t-token@github.com\n',
      '.docker/config.json': '{"auths":{"registry.example.com":{"auth":"YWxpY2U6czNjcjN0cGFzcw=="}}}\n',
      '.pgpass': 'db.example.com:5432:prod:alice:s3cr3tpass\n',
      'infra/terraform.tfvars': 'db_password = "s3cr3t-tfvars"\n',
    };
    /** The same kinds of file with nothing secret in them: these are versioned as usual. */
    const HARMLESS: Record<string, string> = {
      'deploy/kubeconfig.yaml':
        'apiVersion: v1\nkind: Config\nusers:\n- name: sso\n  user:\n    exec:\n      command: aws\n      args: [eks, get-token]\n',
      'tools/.envrc': 'use flake\n',
      'ci/.docker/config.json': '{"credsStore":"desktop"}\n',
    };

    it('kubeconfig keys and tokens, .envrc, .git-credentials, docker auths, .pgpass, terraform.tfvars stay out of versions', async () => {
      const repo = makeRepo();
      await withHistory(repo, async (history) => {
        const { turnId } = await history.beginTurn({ chatId: 'c', prompt: 'write credentials' });
        for (const [file, text] of Object.entries({ ...SECRETS, ...HARMLESS })) write(repo, file, text);
        const end = await history.endTurn(turnId, 'completed');
        assert.ok(end.version);
        assert.deepEqual(end.excluded.map((f) => f.path).sort(), Object.keys(SECRETS).sort());
        const versioned = treePaths(repo, end.version);
        for (const file of Object.keys(SECRETS)) assert.equal(versioned.includes(file), false, `${file} is left out`);
        for (const file of Object.keys(HARMLESS)) assert.ok(versioned.includes(file), `${file} is versioned`);
      });
    });

    it('a secret whose name is not UTF-8 is judged like any other (left out)', async () => {
      const repo = makeRepo();
      const name = Buffer.concat([Buffer.from('creds-'), Buffer.from([0xff]), Buffer.from('.txt')]);
      await withHistory(repo, async (history) => {
        const { turnId } = await history.beginTurn({ chatId: 'c', prompt: 'write creds' });
        fs.writeFileSync(Buffer.concat([Buffer.from(`${repo}/`), name]), 'aws_access_key_id = AKIAABCDEFGHIJKLMNOP\n');
        write(repo, 'app.ts', 'export {};\n');
        const end = await history.endTurn(turnId, 'completed');
        assert.ok(end.version);
        assert.deepEqual(treePaths(repo, end.version).sort(), ['.gitignore', 'README.md', 'app.ts']);
      });
    });

    it('an excluded secret leaves no object behind (judged before it is hashed)', async () => {
      const repo = makeRepo();
      const secret = 'OPENAI_KEY=sk-proj-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n';
      await withHistory(repo, async (history) => {
        const { turnId } = await history.beginTurn({ chatId: 'c', prompt: 'write env' });
        write(repo, '.env', secret);
        write(repo, 'app.ts', 'export {};\n');
        const end = await history.endTurn(turnId, 'completed');
        assert.deepEqual(
          end.excluded.map((f) => f.path),
          ['.env'],
        );
      });
      assert.equal(objectExists(repo, blobIdIn(repo, Buffer.from(secret))), false, 'the secret is in no object');
    });

    it('the same for the [Interrupted] save of a cancelled turn’s work, and the secret stays in the folder', async () => {
      const repo = makeRepo();
      const secret = 'GITHUB_TOKEN=ghp_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n';
      await withHistory(repo, async (history) => {
        const { turnId } = await history.beginTurn({ chatId: 'c', prompt: 'write env, then stop' });
        write(repo, '.env', secret);
        write(repo, 'app.ts', 'export {};\n');
        await history.endTurn(turnId, 'cancelled');
        const before = contentInventory(repo);
        // The save leaves .env out and lists it in info/exclude: from then on it is an ignored file, which the
        // inventory does not count. It is checked byte for byte in the folder instead.
        before.delete(blobIdIn(repo, Buffer.from(secret)));
        const undo = await history.undo();
        assert.equal(undo.result, 'restored');
        assert.ok(undo.preserved);
        assert.deepEqual(treePaths(repo, undo.preserved).sort(), ['.gitignore', 'README.md', 'app.ts']);
        assert.equal(read(repo, '.env'), secret, 'left out of versions, never touched');
        assertNothingLost(repo, before);
      });
      assert.equal(objectExists(repo, blobIdIn(repo, Buffer.from(secret))), false, 'the secret is in no object');
    });

    it('a file whose name is not UTF-8 and holds no secret is versioned under its exact name, and Undo removes it', async () => {
      const repo = makeRepo();
      const name = Buffer.concat([Buffer.from('notes-'), Buffer.from([0xe9]), Buffer.from('.txt')]);
      const file = Buffer.concat([Buffer.from(`${repo}/`), name]);
      await withHistory(repo, async (history) => {
        const { turnId } = await history.beginTurn({ chatId: 'c', prompt: 'write notes' });
        fs.writeFileSync(file, 'plain notes\n');
        const { version } = await history.endTurn(turnId, 'completed');
        assert.ok(version);
        assert.ok(treePaths(repo, version).includes(name.toString('latin1')), 'the exact bytes of the name');
        assert.equal(objectExists(repo, blobIdIn(repo, Buffer.from('plain notes\n'))), true);
        assert.equal((await history.undo()).result, 'restored');
        assert.equal(fs.existsSync(file), false);
        assert.ok(clean(repo));
        assert.equal((await history.redo()).result, 'restored');
        assert.equal(fs.readFileSync(file, 'utf8'), 'plain notes\n');
      });
    });

    it('a new file over 50 MB left out of a version leaves no object behind either', async () => {
      const repo = makeRepo();
      const big = Buffer.alloc(51 * 1024 * 1024, 0x61);
      await withHistory(repo, async (history) => {
        const { turnId } = await history.beginTurn({ chatId: 'c', prompt: 'write a big file' });
        write(repo, 'data/big.bin', big);
        write(repo, 'app.ts', 'export {};\n');
        const end = await history.endTurn(turnId, 'completed');
        assert.ok(end.version);
        assert.deepEqual(treePaths(repo, end.version).sort(), ['.gitignore', 'README.md', 'app.ts']);
        assert.match(end.notice ?? '', /data\/big\.bin is larger than 50 MB/);
      });
      assert.equal(objectExists(repo, blobIdIn(repo, big)), false, 'no 51 MB object was written');
    });

    it('the same at turn begin on a dirty tree', async () => {
      const repo = makeRepo();
      const secret = 'aws_access_key_id = AKIAABCDEFGHIJKLMNOP\n';
      write(repo, 'creds.txt', secret);
      write(repo, 'README.md', '# demo\nedit\n');
      await withHistory(repo, (history) => history.beginTurn({ chatId: 'c', prompt: 'p' }));
      assert.equal(objectExists(repo, blobIdIn(repo, Buffer.from(secret))), false);
    });
  });

  // ---------------------------------------------------------------------------------------------------------
  describe('messages that name the cause', () => {
    it('doctor in a repository owned by another user names the ownership and safe.directory', async function () {
      if (!runningAsRoot()) this.skip(); // chown needs root
      const repo = makeRepo();
      spawnSync('chown', ['-R', '65534', repo]);
      try {
        const r = distCli(['doctor', '--json'], { cwd: repo });
        const report = JSON.parse(r.stdout) as { checks: { id: string; summary: string; fix?: string }[] };
        const check = report.checks.find((c) => c.id === 'repository');
        assert.ok(check);
        assert.match(check.summary, /owned by another user/);
        assert.match(check.fix ?? '', /safe\.directory/);
        assert.doesNotMatch(check.fix ?? '', /git init/);
      } finally {
        spawnSync('chown', ['-R', String(process.getuid!()), repo]);
      }
    });

    it('a folder the agent made with `git init` and no commit: the version is made, the folder left out and named', async () => {
      const repo = makeRepo();
      await withHistory(repo, async (history) => {
        const { turnId } = await history.beginTurn({ chatId: 'c', prompt: 'scaffold a subproject' });
        write(repo, 'app.ts', 'export {};\n');
        git(repo, 'init', '-q', 'sub'); // `git add` refuses it: "does not have a commit checked out"
        write(repo, 'sub/f.txt', 'x\n');
        const end = await history.endTurn(turnId, 'completed');
        assert.ok(end.version, `no version: ${end.message ?? end.reason}`);
        assert.match(end.notice ?? '', /\bsub\b.*its own git repository/);
      });
    });

    it('a file git cannot read: no version, and the message names the file (not "git add failed (exit 128)")', () => {
      const repo = makeRepo();
      const user = unprivileged(repo);
      const begun = user.cli(['turn', 'begin', '--chat', 'c', '--prompt', 'p', '--json']);
      assert.equal(begun.code, 0, begun.stdout + begun.stderr);
      const { turnId } = JSON.parse(begun.stdout) as { turnId: string };
      write(repo, 'app.ts', 'export {};\n');
      write(repo, 'locked.txt', 'private words\n');
      user.own(repo);
      fs.chmodSync(path.join(repo, 'locked.txt'), 0o000);
      try {
        const end = user.cli(['turn', 'end', turnId, '--outcome', 'completed', '--json']);
        const result = JSON.parse(end.stdout) as { version: string | null };
        assert.equal(result.version, null);
        assert.match(end.stderr, /No version was made.*cannot read locked\.txt \(permission denied\)/);
        assert.doesNotMatch(end.stdout + end.stderr, /private words/, 'a name, never the content');
      } finally {
        fs.chmodSync(path.join(repo, 'locked.txt'), 0o644);
      }
    });

    it('a read-only folder left by the agent: Undo refuses before it writes, naming the folder (no half-applied restore)', () => {
      const repo = makeRepo();
      const user = unprivileged(repo);
      const begun = user.cli(['turn', 'begin', '--chat', 'c', '--prompt', 'generate', '--json']);
      const { turnId } = JSON.parse(begun.stdout) as { turnId: string };
      write(repo, 'gen/a.txt', 'g\n');
      write(repo, 'README.md', '# demo\nedit\n');
      user.own(repo);
      const end = user.cli(['turn', 'end', turnId, '--outcome', 'completed', '--json']);
      assert.ok((JSON.parse(end.stdout) as { version: string | null }).version, end.stdout);
      fs.chmodSync(path.join(repo, 'gen'), 0o555);
      try {
        const before = repoPicture(repo);
        const undo = user.cli(['undo', '--json']);
        assert.equal(undo.code, 1, undo.stdout);
        const { error } = JSON.parse(undo.stdout) as { error: { reason: string; message: string } };
        assert.equal(error.reason, 'folder-read-only');
        assert.match(error.message, /gen\/ is read-only/);
        assert.match(error.message, /Nothing was changed/);
        assert.deepEqual(repoPicture(repo), before, 'nothing changed');
        const status = JSON.parse(user.cli(['status', '--json']).stdout) as { recovery: unknown };
        assert.equal(status.recovery, null, 'no recovery latched');
      } finally {
        fs.chmodSync(path.join(repo, 'gen'), 0o755);
      }
    });

    it('an ignored file in the way of Undo is named', async () => {
      const repo = makeRepo();
      write(repo, 'keep.log', 'tracked log\n');
      git(repo, 'add', '-f', 'keep.log');
      git(repo, 'commit', '-q', '-m', 'keep.log');
      await withHistory(repo, async (history) => {
        const { turnId } = await history.beginTurn({ chatId: 'c', prompt: 'delete keep.log' });
        fs.rmSync(path.join(repo, 'keep.log'));
        await history.endTurn(turnId, 'completed');
        write(repo, 'keep.log', 'the app wrote its log again\n'); // ignored by *.log
        await expectRefusalNaming(repo, history.undo(), 'keep.log');
      });
    });
  });

  // ---------------------------------------------------------------------------------------------------------
  it('control: the helpers see a plain repository round-trip', async () => {
    const repo = makeRepo();
    await withHistory(repo, async (history) => {
      const { turnId } = await history.beginTurn({ chatId: 'c', prompt: 'control' });
      write(repo, 'a.txt', 'a\n');
      assert.ok((await history.endTurn(turnId, 'completed')).version);
      assert.equal((await history.undo()).result, 'restored');
      assert.ok(clean(repo));
    });
  });
});
