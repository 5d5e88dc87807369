import * as assert from 'node:assert/strict';
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { checkRepository, saveAndAcceptCurrentVersion } from '../../src/core/recovery/recoveryActions';
import { setRecovery } from '../../src/core/operations/recoveryLatch';
import { getTurn } from '../../src/core/turns/turnRecords';
import { VersionHistory } from '../../src/core/versionHistory';
import { expectReason } from '../support/assertions';
import { runCliProcess, TEST_BUILD_CLI } from '../support/cliProcess';
import {
  assertNothingLost,
  blobOid,
  cleanupTempDirs,
  contentInventory,
  git,
  gitStatus,
  head,
  makeRepo,
  read,
  subjectOf,
  tempDir,
  write,
} from '../support/gitFixtures';
import { spawnSync } from 'node:child_process';
import { testGitEnv } from '../support/gitFixtures';
import { contextOf } from '../../src/core/repoContextOf';

/**
 * The shapes real turns take, on real repositories: type changes and odd names round-trip through Undo and Redo,
 * staged content stays reachable, an operation in progress is named at every entry point, nested repositories
 * never become gitlinks.
 */

const treeOf = (repo: string, rev = 'HEAD') => git(repo, 'rev-parse', `${rev}^{tree}`).trim();
const clean = (repo: string) => git(repo, 'status', '--porcelain', '--untracked-files=all').trim() === '';
const lsTree = (repo: string, rev: string) => git(repo, 'ls-tree', '-r', '-z', rev).split('\0').filter(Boolean);

function commitAll(repo: string, message: string): void {
  git(repo, 'add', '-A');
  git(repo, 'commit', '-q', '--allow-empty', '-m', message);
}

interface Shape {
  name: string;
  /** Committed before the turn. */
  before: (repo: string) => void;
  /** What the agent does during the turn. */
  agent: (repo: string) => void;
  /** An entry `git ls-tree -r` must show in the version (mode, then path). */
  expect: { mode: string; path: string };
}

const HUNDREDS = 300;
const BIG_BYTES = 40 * 1024 * 1024;

const SHAPES: Shape[] = [
  {
    name: 'file → folder',
    before: (repo) => write(repo, 'src/util.js', 'module.exports = 1;\n'),
    agent: (repo) => {
      fs.rmSync(path.join(repo, 'src/util.js'));
      write(repo, 'src/util.js/index.js', 'module.exports = 2;\n');
    },
    expect: { mode: '100644', path: 'src/util.js/index.js' },
  },
  {
    name: 'folder → file',
    before: (repo) => write(repo, 'src/util.js/index.js', 'module.exports = 1;\n'),
    agent: (repo) => {
      fs.rmSync(path.join(repo, 'src/util.js'), { recursive: true });
      write(repo, 'src/util.js', 'module.exports = 2;\n');
    },
    expect: { mode: '100644', path: 'src/util.js' },
  },
  {
    name: 'symlink → file',
    before: (repo) => fs.symlinkSync('README.md', path.join(repo, 'link.md')),
    agent: (repo) => {
      fs.rmSync(path.join(repo, 'link.md'));
      write(repo, 'link.md', 'now a file\n');
    },
    expect: { mode: '100644', path: 'link.md' },
  },
  {
    name: 'file → symlink',
    before: (repo) => write(repo, 'config.md', 'a file\n'),
    agent: (repo) => {
      fs.rmSync(path.join(repo, 'config.md'));
      fs.symlinkSync('README.md', path.join(repo, 'config.md'));
    },
    expect: { mode: '120000', path: 'config.md' },
  },
  {
    name: 'executable bit',
    before: (repo) => write(repo, 'run.sh', '#!/bin/sh\necho hi\n'),
    agent: (repo) => fs.chmodSync(path.join(repo, 'run.sh'), 0o755),
    expect: { mode: '100755', path: 'run.sh' },
  },
  {
    name: `a renamed folder of ${HUNDREDS} files`,
    before: (repo) => {
      for (let i = 0; i < HUNDREDS; i++) write(repo, `lib/part${i}.ts`, `export const n = ${i};\n`);
    },
    agent: (repo) => fs.renameSync(path.join(repo, 'lib'), path.join(repo, 'pkg')),
    expect: { mode: '100644', path: `pkg/part${HUNDREDS - 1}.ts` },
  },
  {
    name: 'names like --force, -n, HEAD and :(glob)*',
    before: (repo) => write(repo, '-n', 'dash n\n'),
    agent: (repo) => {
      write(repo, '-n', 'dash n, changed\n');
      write(repo, '--force', 'force\n');
      write(repo, 'HEAD', 'head\n');
      write(repo, ':(glob)*', 'glob magic\n');
    },
    expect: { mode: '100644', path: ':(glob)*' },
  },
  {
    name: 'a 40 MB binary',
    before: () => undefined,
    agent: (repo) => write(repo, 'assets/big.bin', crypto.randomBytes(BIG_BYTES)),
    expect: { mode: '100644', path: 'assets/big.bin' },
  },
];

async function openShape(shape: Shape): Promise<{ repo: string; history: VersionHistory; base: string }> {
  const repo = makeRepo();
  shape.before(repo);
  commitAll(repo, 'before');
  return { repo, history: await VersionHistory.open(repo), base: head(repo) };
}

describe('the shapes real turns take (real git, real store)', function () {
  this.timeout(120_000);
  afterEach(cleanupTempDirs);

  for (const shape of SHAPES) {
    it(`${shape.name}: turn → undo → redo restores each tree exactly`, async () => {
      const { repo, history, base } = await openShape(shape);
      try {
        const { turnId } = await history.beginTurn({ chatId: 'c', prompt: shape.name });
        shape.agent(repo);
        const before = contentInventory(repo);
        const { version } = await history.endTurn(turnId, 'completed');
        assert.ok(version, 'a version was made');
        assert.ok(
          lsTree(repo, version).some(
            (e) => e.startsWith(`${shape.expect.mode} `) && e.endsWith(`\t${shape.expect.path}`),
          ),
          'the version holds the new shape',
        );
        assert.ok(clean(repo), 'the index follows the version');
        const versionTree = treeOf(repo);
        assert.equal((await history.undo()).result, 'restored');
        assert.equal(treeOf(repo), treeOf(repo, base));
        assert.ok(clean(repo), 'files equal the base exactly');
        assert.equal((await history.redo()).result, 'restored');
        assert.equal(treeOf(repo), versionTree);
        assert.ok(clean(repo), 'files equal the version exactly');
        assert.equal((await history.status()).recovery, null);
        assertNothingLost(repo, before);
      } finally {
        await history.close();
      }
    });

    it(`${shape.name}, as the partial work of a cancelled turn: undo saves it as [Interrupted], redo brings it back`, async () => {
      const { repo, history, base } = await openShape(shape);
      try {
        const { turnId } = await history.beginTurn({ chatId: 'c', prompt: shape.name });
        shape.agent(repo);
        await history.endTurn(turnId, 'cancelled');
        const before = contentInventory(repo);
        const undo = await history.undo();
        assert.equal(undo.result, 'restored');
        assert.ok(undo.preserved);
        assert.ok(
          lsTree(repo, undo.preserved).some(
            (e) => e.startsWith(`${shape.expect.mode} `) && e.endsWith(`\t${shape.expect.path}`),
          ),
        );
        assert.equal(treeOf(repo), treeOf(repo, base));
        assert.ok(clean(repo));
        assert.equal((await history.redo()).result, 'restored');
        assert.equal(treeOf(repo), treeOf(repo, undo.preserved));
        assert.ok(clean(repo));
        assertNothingLost(repo, before);
      } finally {
        await history.close();
      }
    });
  }
});

/** A repository with a.txt committed as v1. */
function repoWithA(): string {
  const repo = makeRepo();
  write(repo, 'a.txt', 'v1\n');
  commitAll(repo, 'a v1');
  return repo;
}

/** v2 of a.txt staged (`git add`), v3 in the working tree: v2 exists only in the index. */
function stageOnly(repo: string): string {
  write(repo, 'a.txt', 'v2 staged\n');
  git(repo, 'add', 'a.txt');
  write(repo, 'a.txt', 'v3 in the working tree\n');
  return blobOid(Buffer.from('v2 staged\n'));
}

function stagedTrailer(repo: string, rev: string): string | null {
  const value = git(repo, 'log', '-1', '--format=%(trailers:key=Agent-Staged,valueonly)', rev).trim();
  return value || null;
}

function assertStagedKept(repo: string, rev: string, staged: string): void {
  const keeper = stagedTrailer(repo, rev);
  assert.ok(keeper, `${rev} names the staged tree`);
  assert.equal(git(repo, 'rev-parse', `${keeper}:a.txt`).trim(), staged);
  assert.equal(
    git(repo, 'rev-parse', `refs/agent-versions/staged/${git(repo, 'rev-parse', rev).trim()}`).trim(),
    keeper,
    'a private ref keeps it',
  );
}

describe('what the user staged stays reachable (real git)', function () {
  this.timeout(60_000);
  afterEach(cleanupTempDirs);

  it('through a base snapshot and a completed turn', async () => {
    const repo = repoWithA();
    const staged = stageOnly(repo);
    const before = contentInventory(repo);
    assert.ok(before.has(staged), 'the oracle sees the index');
    const history = await VersionHistory.open(repo);
    try {
      const { turnId, baseCommit } = await history.beginTurn({ chatId: 'c', prompt: 'p' });
      assertStagedKept(repo, baseCommit, staged);
      write(repo, 'b.txt', 'agent\n');
      const { version } = await history.endTurn(turnId, 'completed');
      assert.ok(version);
      assertStagedKept(repo, 'HEAD', staged);
      git(repo, 'gc', '-q', '--prune=now');
      assertNothingLost(repo, before);
    } finally {
      await history.close();
    }
  });

  it('through Undo of a cancelled turn, and a refused Redo leaves the index alone', async () => {
    const repo = repoWithA();
    const history = await VersionHistory.open(repo);
    try {
      const { turnId } = await history.beginTurn({ chatId: 'c', prompt: 'p' });
      write(repo, 'b.txt', 'partial\n');
      await history.endTurn(turnId, 'cancelled');
      const staged = stageOnly(repo);
      const before = contentInventory(repo);
      const undo = await history.undo();
      assert.ok(undo.preserved);
      assertStagedKept(repo, undo.preserved, staged);
      git(repo, 'gc', '-q', '--prune=now');
      assertNothingLost(repo, before);
      // Redo over staged work is refused and changes nothing.
      write(repo, 'a.txt', 'staged again\n');
      git(repo, 'add', 'a.txt');
      write(repo, 'a.txt', 'edited again\n');
      const beforeRedo = contentInventory(repo);
      await expectReason(history.redo(), 'dirty-conflict');
      assertNothingLost(repo, beforeRedo);
      assert.equal(git(repo, 'show', ':a.txt'), 'staged again\n');
    } finally {
      await history.close();
    }
  });

  it('through Redo: the [Interrupted] version Redo brings back still names the staged tree', async () => {
    const repo = repoWithA();
    const history = await VersionHistory.open(repo);
    try {
      const { turnId } = await history.beginTurn({ chatId: 'c', prompt: 'p' });
      const staged = stageOnly(repo);
      await history.endTurn(turnId, 'cancelled');
      const before = contentInventory(repo);
      const undo = await history.undo();
      assert.ok(undo.preserved);
      assert.equal((await history.redo()).result, 'restored');
      assert.equal(treeOf(repo), treeOf(repo, undo.preserved));
      assertStagedKept(repo, undo.preserved, staged);
      git(repo, 'gc', '-q', '--prune=now');
      assertNothingLost(repo, before);
    } finally {
      await history.close();
    }
  });

  it('through Save changes & use current version, also when only the index differs', async () => {
    for (const indexOnly of [false, true]) {
      const repo = repoWithA();
      const staged = stageOnly(repo);
      if (indexOnly) write(repo, 'a.txt', 'v1\n');
      const before = contentInventory(repo);
      const history = await VersionHistory.open(repo);
      try {
        await contextOf(history).store.transaction((tx) =>
          setRecovery(tx, 'op', 'ambiguous', 'update-worktree', Date.now()),
        );
        const settled = await saveAndAcceptCurrentVersion(contextOf(history));
        assert.equal(settled.result, 'accepted');
        assertStagedKept(repo, 'HEAD', staged);
        assert.ok(clean(repo));
        git(repo, 'gc', '-q', '--prune=now');
        assertNothingLost(repo, before);
      } finally {
        await history.close();
      }
    }
  });
});

/** Each git operation, left in progress the way a user leaves it. */
const OPERATIONS: { op: string; make: (repo: string) => void }[] = [
  {
    op: 'rebase',
    make: (repo) => {
      conflicting(repo);
      assert.notEqual(gitStatus(repo, 'rebase', 'other').code, 0);
    },
  },
  {
    op: 'merge',
    make: (repo) => {
      conflicting(repo);
      assert.notEqual(gitStatus(repo, 'merge', 'other').code, 0);
    },
  },
  {
    op: 'cherry-pick',
    make: (repo) => {
      conflicting(repo);
      assert.notEqual(gitStatus(repo, 'cherry-pick', 'other').code, 0);
    },
  },
  {
    op: 'revert',
    make: (repo) => {
      for (const v of ['one', 'two', 'three']) {
        write(repo, 'conflict.txt', `${v}\n`);
        commitAll(repo, v);
      }
      assert.notEqual(gitStatus(repo, 'revert', '--no-edit', 'HEAD~1').code, 0);
    },
  },
  {
    op: 'bisect',
    make: (repo) => {
      const first = git(repo, 'rev-list', '--max-parents=0', 'HEAD').trim();
      for (const n of [1, 2, 3]) {
        write(repo, `step${n}.txt`, `${n}\n`);
        commitAll(repo, `step ${n}`);
      }
      git(repo, 'bisect', 'start');
      git(repo, 'bisect', 'bad');
      git(repo, 'bisect', 'good', first);
    },
  },
];

function conflicting(repo: string): void {
  write(repo, 'conflict.txt', 'base\n');
  commitAll(repo, 'base');
  git(repo, 'checkout', '-q', '-b', 'other');
  write(repo, 'conflict.txt', 'theirs\n');
  commitAll(repo, 'theirs');
  git(repo, 'checkout', '-q', 'main');
  write(repo, 'conflict.txt', 'ours\n');
  commitAll(repo, 'ours');
}

describe('an operation in progress is named at every entry point, never "detached" (real git)', function () {
  this.timeout(60_000);
  afterEach(cleanupTempDirs);

  for (const { op, make } of OPERATIONS) {
    it(`${op}: turn begin, turn end, undo, redo, restore and recover check all name it`, async () => {
      const repo = makeRepo();
      const history = await VersionHistory.open(repo);
      try {
        const done = await history.beginTurn({ chatId: 'c', prompt: 'earlier' });
        write(repo, 'earlier.txt', 'x\n');
        await history.endTurn(done.turnId, 'completed');
        const running = await history.beginTurn({ chatId: 'c', prompt: 'running' });
        make(repo);
        const before = contentInventory(repo);
        const headBefore = gitStatus(repo, 'rev-parse', 'HEAD').stdout;
        const names = new RegExp(`A Git ${op} is still in progress`);
        const check = (message: string, where: string) => {
          assert.match(message, names, where);
          assert.doesNotMatch(message, /detached/i, where);
        };
        check(
          (await expectReason(history.beginTurn({ chatId: 'c', prompt: 'p' }), 'operation-in-progress')).message,
          'turn begin',
        );
        const ended = await history.endTurn(running.turnId, 'completed');
        assert.equal(ended.version, null);
        assert.equal(ended.reason, 'operation-in-progress');
        check(ended.message ?? '', 'turn end');
        check((await expectReason(history.undo(done.turnId), 'operation-in-progress')).message, 'undo');
        check((await expectReason(history.redo(), 'operation-in-progress')).message, 'redo');
        check(
          (
            await expectReason(
              history.restore(git(repo, 'rev-list', '--max-parents=0', 'HEAD').trim()),
              'operation-in-progress',
            )
          ).message,
          'restore',
        );
        const assessment = await checkRepository(contextOf(history));
        assert.equal(assessment.kind, 'blocked');
        assert.equal(assessment.kind === 'blocked' && assessment.blocker, op);
        check(assessment.kind === 'blocked' ? assessment.message : '', 'recover check');
        assert.equal(gitStatus(repo, 'rev-parse', 'HEAD').stdout, headBefore, 'nothing moved');
        assertNothingLost(repo, before);
      } finally {
        await history.close();
      }
    });
  }
});

describe('nested repositories, hooks and retries at the edges (real git, real processes)', function () {
  this.timeout(60_000);
  afterEach(cleanupTempDirs);

  it('a nested repository created by a turn: no gitlink in the version, named once, undo keeps its files, no recovery', async () => {
    const repo = makeRepo();
    const history = await VersionHistory.open(repo);
    try {
      const { turnId } = await history.beginTurn({ chatId: 'c', prompt: 'clone the helper' });
      const nested = path.join(repo, 'vendor/helper');
      fs.mkdirSync(nested, { recursive: true });
      git(nested, 'init', '-q', '-b', 'main');
      write(nested, 'lib.js', 'helper\n');
      git(nested, '-c', 'user.name=n', '-c', 'user.email=n@example.com', 'add', '-A');
      git(nested, '-c', 'user.name=n', '-c', 'user.email=n@example.com', 'commit', '-q', '-m', 'helper');
      write(repo, 'app.js', 'uses helper\n');
      const before = contentInventory(repo);
      const ended = await history.endTurn(turnId, 'completed');
      assert.ok(ended.version);
      assert.equal(ended.notice, 'vendor/helper is its own git repository; Version History does not version it.');
      assert.ok(!lsTree(repo, ended.version).some((e) => e.startsWith('160000 ')), 'no gitlink');
      assert.ok(lsTree(repo, ended.version).some((e) => e.endsWith('\tapp.js')));
      assert.equal((await history.status()).health.clean, true, 'the nested repository is not counted as a change');
      assert.deepEqual((await history.status()).health.nestedRepositories, ['vendor/helper']);
      const undo = await history.undo();
      assert.equal(undo.result, 'restored');
      assert.equal(read(repo, 'vendor/helper/lib.js'), 'helper\n', 'undo leaves it untouched');
      assert.equal(fs.existsSync(path.join(repo, 'app.js')), false);
      assert.equal((await history.status()).recovery, null, 'no recovery after a restore that worked');
      assert.equal(undo.notice, undefined, 'named once');
      const second = await history.beginTurn({ chatId: 'c', prompt: 'again' });
      write(repo, 'more.js', 'x\n');
      const again = await history.endTurn(second.turnId, 'completed');
      assert.ok(again.version);
      assert.equal(again.notice, undefined, 'named once');
      assertNothingLost(repo, before);
    } finally {
      await history.close();
    }
  });

  it('a reference-transaction hook refusing the branch move: "git refused", never "branch moved", nothing changed', async () => {
    const repo = makeRepo();
    const history = await VersionHistory.open(repo);
    try {
      const { turnId } = await history.beginTurn({ chatId: 'c', prompt: 'p' });
      write(repo, 'work.txt', 'agent work\n');
      write(repo, '.git/hooks/reference-transaction', '#!/bin/sh\n[ "$1" = prepared ] && exit 1\nexit 0\n');
      fs.chmodSync(path.join(repo, '.git/hooks/reference-transaction'), 0o755);
      const start = head(repo);
      const before = contentInventory(repo);
      const ended = await history.endTurn(turnId, 'completed');
      assert.equal(ended.version, null);
      assert.equal(ended.reason, 'ref-update-refused');
      assert.match(ended.message ?? '', /Git refused to move the branch/);
      assert.doesNotMatch(ended.message ?? '', /moved while/);
      assert.equal(head(repo), start);
      assert.equal(read(repo, 'work.txt'), 'agent work\n');
      assertNothingLost(repo, before);
    } finally {
      await history.close();
    }
  });

  it('a retried Undo after a failure that left [Interrupted] makes no second [Interrupted] commit', async () => {
    const repo = makeRepo();
    write(repo, '.gitignore', 'cfg\n');
    write(repo, 'cfg/app.json', '{"v":1}\n');
    git(repo, 'add', '-f', '.gitignore', 'cfg/app.json');
    git(repo, 'commit', '-q', '-m', 'config');
    const history = await VersionHistory.open(repo);
    try {
      const { turnId } = await history.beginTurn({ chatId: 'c', prompt: 'flatten config' });
      fs.rmSync(path.join(repo, 'cfg'), { recursive: true });
      write(repo, 'cfg', 'an ignored file now\n');
      write(repo, 'partial.txt', 'partial work\n');
      await history.endTurn(turnId, 'cancelled');
      const before = contentInventory(repo);
      await expectReason(history.undo(), 'dirty-conflict');
      const interrupted = head(repo);
      await expectReason(history.undo(), 'dirty-conflict');
      assert.equal(head(repo), interrupted, 'the retry made no commit');
      fs.renameSync(path.join(repo, 'cfg'), path.join(tempDir('avh-aside-'), 'cfg'));
      assert.equal((await history.undo()).result, 'restored');
      const subjects = git(repo, 'log', '--format=%s').split('\n');
      assert.equal(subjects.filter((s) => s.startsWith('[Interrupted]')).length, 1);
      assert.equal(git(repo, 'rev-parse', 'HEAD^').trim(), interrupted);
      assertNothingLost(repo, before);
    } finally {
      await history.close();
    }
  });

  it('a crash between "completed" and its commit leaves no turn pending: the next process settles it', async () => {
    for (const point of ['turn-end:after-outcome', 'turn-commit:after-update-ref']) {
      const repo = makeRepo();
      const start = head(repo);
      const history = await VersionHistory.open(repo);
      const { turnId } = await history.beginTurn({ chatId: 'c', prompt: 'p' });
      await history.close();
      write(repo, 'work.txt', 'agent work\n');
      const before = contentInventory(repo);
      const killed = spawnSync(process.execPath, [TEST_BUILD_CLI, 'turn', 'end', turnId, '--outcome', 'completed'], {
        cwd: repo,
        env: { ...testGitEnv(), AVH_FAILPOINT: point },
        encoding: 'utf8',
      });
      assert.equal(killed.signal, 'SIGKILL', `${point}: ${killed.stderr}`);
      const status = runCliProcess(['status', '--json'], { cwd: repo });
      assert.equal(status.code, 0, status.stderr);
      const reopened = await VersionHistory.open(repo);
      try {
        const turn = await contextOf(reopened).store.read((r) => getTurn(r, turnId));
        assert.notEqual(turn?.no_version_reason, 'pending', point);
        if (point === 'turn-end:after-outcome') {
          assert.equal(head(repo), start);
          assert.equal(turn?.no_version_reason, 'interrupted');
          assert.equal(turn?.version_commit, null);
        } else {
          assert.equal(turn?.version_commit, head(repo), 'the commit that landed is recorded');
          assert.match(subjectOf(repo), /^\[Agent\] /);
          assert.ok(clean(repo), 'the index followed the branch (repaired by reconciliation)');
        }
        assertNothingLost(repo, before);
      } finally {
        await reopened.close();
      }
    }
  });
});
