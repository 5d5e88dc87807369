import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { HEAVY_BLOCK_START, HEAVY_PATTERNS } from '../../src/core/git/heavyFolders';
import { FIRST_BASE_SUBJECT } from '../../src/core/git/workingTree';
import { VersionHistory } from '../../src/core/versionHistory';
import { expectReason, repoPicture } from '../support/assertions';
import { runCliProcess } from '../support/cliProcess';
import {
  assertNothingLost,
  cleanupTempDirs,
  contentInventory,
  git,
  gitStatus,
  makeRepo,
  subjectOf,
  tempDir,
  write,
} from '../support/gitFixtures';

/** Issue 13: versions from the very first prompt, in a folder without git or a repository without commits. */

/** A git config of its own for CLI processes: a default branch name, and (deliberately) no identity. */
function isolatedGitEnv(defaultBranch = 'trunk'): { env: NodeJS.ProcessEnv; globalConfig: string } {
  const home = tempDir('avh-home-');
  const globalConfig = path.join(home, '.gitconfig');
  fs.writeFileSync(globalConfig, `[init]\n\tdefaultBranch = ${defaultBranch}\n`);
  return {
    globalConfig,
    env: {
      HOME: home,
      XDG_CONFIG_HOME: home,
      GIT_CONFIG_GLOBAL: globalConfig,
      GIT_AUTHOR_NAME: '',
      GIT_AUTHOR_EMAIL: '',
      GIT_COMMITTER_NAME: '',
      GIT_COMMITTER_EMAIL: '',
      EMAIL: '',
    },
  };
}

/** Every non-.git file of the folder (relative, sorted): what the user sees. */
function folderFiles(root: string): string[] {
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const name of fs.readdirSync(dir)) {
      const full = path.join(dir, name);
      const rel = path.relative(root, full);
      if (rel === '.git') continue;
      if (fs.lstatSync(full).isDirectory()) walk(full);
      else files.push(rel.split(path.sep).join('/'));
    }
  };
  walk(root);
  return files.sort();
}

function treeFiles(repo: string, rev: string): string[] {
  return git(repo, 'ls-tree', '-r', '--name-only', rev).split('\n').filter(Boolean).sort();
}

/** Every path in any commit reachable from any ref (our private refs included). */
function pathsInAnyCommit(repo: string): Set<string> {
  const paths = new Set<string>();
  for (const commit of git(repo, 'rev-list', '--all').split('\n').filter(Boolean)) {
    for (const p of treeFiles(repo, commit)) paths.add(p);
  }
  return paths;
}

function assertFsckClean(repo: string): void {
  const r = gitStatus(repo, 'fsck', '--full', '--strict');
  assert.equal(r.code, 0, `git fsck: ${r.stderr}`);
  assert.doesNotMatch(r.stderr + r.stdout, /error|missing|broken|corrupt/i);
}

function hookEvent(event: string, cwd: string, prompt?: string): string {
  return JSON.stringify({ hook_event_name: event, session_id: 'session-1', cwd, ...(prompt ? { prompt } : {}) });
}

describe('new projects: versions from the very first prompt (real git, real sql.js files, real CLI processes)', function () {
  this.timeout(120_000);
  afterEach(cleanupTempDirs);

  it('empty folder → init → a turn creates 20 files → Undo leaves it empty → Redo brings the 20 files back; fsck clean', async () => {
    const folder = tempDir('avh-new-');
    const { env } = isolatedGitEnv();
    const init = runCliProcess(['init', '--json'], { cwd: folder, env });
    assert.equal(init.code, 0, init.stderr);
    assert.deepEqual(JSON.parse(init.stdout), { repository: folder, branch: 'trunk' });
    assert.equal(gitStatus(folder, 'rev-parse', '--verify', 'HEAD').code !== 0, true, 'the branch is unborn');

    const history = await VersionHistory.open(folder);
    try {
      const { turnId } = await history.beginTurn({ chatId: 'c1', prompt: 'Scaffold an app' });
      assert.equal(
        gitStatus(folder, 'rev-parse', '--verify', 'HEAD').code !== 0,
        true,
        'an empty folder makes no [Base] commit',
      );
      const files = Array.from({ length: 20 }, (_, i) => `src/module${i}.ts`);
      for (const f of files) write(folder, f, `export const value = '${f}';\n`);
      write(folder, 'node_modules/left-pad/index.js', 'module.exports = 1;\n'); // excluded: no .gitignore here
      const end = await history.endTurn(turnId, 'completed');
      assert.ok(end.version);
      assert.equal(subjectOf(folder), '[Agent] Scaffold an app');
      assert.equal(git(folder, 'rev-list', '--count', 'HEAD').trim(), '1', 'the [Agent] commit is the root commit');
      assert.deepEqual(treeFiles(folder, 'HEAD'), files.sort());
      const before = contentInventory(folder);

      const undo = await history.undo();
      assert.equal(undo.result, 'restored');
      assert.match(subjectOf(folder), /^\[Restore\] /);
      assert.deepEqual(treeFiles(folder, 'HEAD'), [], 'the [Restore] commit holds the empty tree');
      assert.deepEqual(
        folderFiles(folder),
        ['node_modules/left-pad/index.js'],
        'nothing untracked is left but ignored files',
      );
      assert.equal(git(folder, 'status', '--porcelain').trim(), '');

      const redo = await history.redo();
      assert.equal(redo.result, 'restored');
      assert.deepEqual(treeFiles(folder, 'HEAD'), files.sort());
      assert.deepEqual(folderFiles(folder), [...files, 'node_modules/left-pad/index.js'].sort());
      assertNothingLost(folder, before);
      assertFsckClean(folder);
    } finally {
      await history.close();
    }
  });

  it('a repository without commits holding 3 files: the [Base] root commit holds exactly them; Undo gives back exactly them', async () => {
    const repo = makeRepo({ commit: false });
    write(repo, 'notes.md', '# my notes\n');
    write(repo, 'data/input.csv', 'a,b\n1,2\n');
    write(repo, 'script.py', 'print("hi")\n');
    git(repo, 'add', 'notes.md'); // one of them staged, as a user might
    const before = contentInventory(repo);
    const history = await VersionHistory.open(repo);
    try {
      const { turnId, baseCommit } = await history.beginTurn({ chatId: 'c1', prompt: 'Refactor the script' });
      assert.equal(subjectOf(repo, baseCommit), FIRST_BASE_SUBJECT);
      assert.equal(git(repo, 'rev-list', '--count', baseCommit).trim(), '1', '[Base] is the root commit');
      assert.deepEqual(treeFiles(repo, baseCommit), ['data/input.csv', 'notes.md', 'script.py']);
      assert.equal(git(repo, 'status', '--porcelain').trim(), '', 'the index follows [Base]: git status is clean');

      write(repo, 'script.py', 'def main():\n    print("hi")\n');
      fs.rmSync(path.join(repo, 'notes.md'));
      write(repo, 'tests/test_script.py', 'def test(): pass\n');
      const end = await history.endTurn(turnId, 'completed');
      assert.ok(end.version);
      assert.equal(git(repo, 'rev-parse', `${end.version}^`).trim(), baseCommit, '[Agent] follows [Base]');

      const undo = await history.undo();
      assert.equal(undo.result, 'restored');
      assert.deepEqual(folderFiles(repo), ['data/input.csv', 'notes.md', 'script.py']);
      assert.equal(fs.readFileSync(path.join(repo, 'script.py'), 'utf8'), 'print("hi")\n');
      assert.equal(git(repo, 'status', '--porcelain').trim(), '');
      assertNothingLost(repo, before);
      assertFsckClean(repo);
    } finally {
      await history.close();
    }
  });

  it('before any version: Redo names the unborn branch (nothing to return to), Undo has nothing to undo; nothing changes', async () => {
    const repo = makeRepo({ commit: false });
    write(repo, 'a.txt', 'a\n');
    const picture = repoPicture(repo);
    const history = await VersionHistory.open(repo);
    try {
      const redo = await expectReason(history.redo(), 'unborn-branch');
      assert.match(
        redo.message,
        /no commits yet, so there is no version to return to\. The first agent turn makes one/,
      );
      assert.equal((await history.undo()).result, 'nothing-to-undo');
      assert.deepEqual(repoPicture(repo), picture);
    } finally {
      await history.close();
    }
  });

  it('a cancelled first turn: Undo saves [Interrupted] and restores the pre-turn folder (with files, and empty)', async () => {
    for (const withFiles of [true, false]) {
      const repo = makeRepo({ commit: false });
      if (withFiles) write(repo, 'keep.txt', 'mine\n');
      const history = await VersionHistory.open(repo);
      try {
        const { turnId } = await history.beginTurn({ chatId: 'c1', prompt: 'Start something' });
        write(repo, 'half/done.ts', 'export {};\n');
        if (withFiles) write(repo, 'keep.txt', 'mine, half edited\n');
        const partial = contentInventory(repo);
        await history.endTurn(turnId, 'cancelled');
        const undo = await history.undo();
        assert.equal(undo.result, 'restored', `withFiles=${withFiles}`);
        assert.ok(undo.preserved);
        assert.match(subjectOf(repo, undo.preserved), /^\[Interrupted\] /);
        assert.deepEqual(treeFiles(repo, undo.preserved), withFiles ? ['half/done.ts', 'keep.txt'] : ['half/done.ts']);
        assert.deepEqual(folderFiles(repo), withFiles ? ['keep.txt'] : []);
        if (withFiles) assert.equal(fs.readFileSync(path.join(repo, 'keep.txt'), 'utf8'), 'mine\n');
        assert.equal(git(repo, 'status', '--porcelain').trim(), '');
        assertNothingLost(repo, partial);
        assertFsckClean(repo);
      } finally {
        await history.close();
      }
    }
  });

  it('node_modules/ with 5,000 files and a 60 MB file at the first turn: neither enters any commit; named once', async () => {
    const repo = makeRepo({ commit: false });
    write(repo, 'index.js', 'require("dep");\n');
    const before = contentInventory(repo); // the excluded files are checked on disk below
    for (let i = 0; i < 5000; i++) write(repo, `node_modules/dep${i % 50}/file${i}.js`, `module.exports = ${i};\n`);
    const big = Buffer.alloc(60 * 1024 * 1024, 7);
    write(repo, 'assets/video.bin', big);
    const exclude = path.join(repo, '.git', 'info', 'exclude');
    const userExclude = fs.readFileSync(exclude, 'utf8');
    const history = await VersionHistory.open(repo);
    try {
      const begin = await history.beginTurn({ chatId: 'c1', prompt: 'Add a page' });
      assert.match(begin.notice ?? '', /assets\/video\.bin is larger than 50 MB/);
      write(repo, 'page.js', 'export default 1;\n');
      const end = await history.endTurn(begin.turnId, 'completed');
      assert.ok(end.version);
      assert.equal(end.notice, undefined, 'the large file is named once');
      const committed = pathsInAnyCommit(repo);
      assert.deepEqual([...committed].sort(), ['index.js', 'page.js']);
      const text = fs.readFileSync(exclude, 'utf8');
      assert.ok(text.startsWith(userExclude), 'the user lines of info/exclude are untouched');
      assert.ok(
        text.includes(`${HEAVY_BLOCK_START}\n${HEAVY_PATTERNS.join('\n')}\n/assets/video.bin\n# agent-versions: end\n`),
      );
      assert.equal(fs.existsSync(path.join(repo, '.gitignore')), false, 'no .gitignore is written');
      assert.equal(
        fs.statSync(path.join(repo, 'assets/video.bin')).size,
        big.length,
        'the large file stays in the folder',
      );
      assert.equal(fs.readdirSync(path.join(repo, 'node_modules')).length, 50, 'node_modules stays in the folder');
      assertNothingLost(repo, before);
    } finally {
      await history.close();
    }
  });

  it('a .gitignore already present is respected: no exclude lines are added', async () => {
    const repo = makeRepo({ commit: false });
    write(repo, '.gitignore', 'node_modules/\n');
    write(repo, 'dist/bundle.js', 'built\n'); // not ignored by the user's .gitignore: the user's choice stands
    for (let i = 0; i < 20; i++) write(repo, `node_modules/dep/file${i}.js`, `${i}\n`);
    const exclude = path.join(repo, '.git', 'info', 'exclude');
    const userExclude = fs.readFileSync(exclude, 'utf8');
    const history = await VersionHistory.open(repo);
    try {
      const { turnId, baseCommit } = await history.beginTurn({ chatId: 'c1', prompt: 'Build' });
      assert.deepEqual(treeFiles(repo, baseCommit), ['.gitignore', 'dist/bundle.js']);
      write(repo, 'dist/bundle.js', 'built again\n');
      await history.endTurn(turnId, 'completed');
      assert.equal(fs.readFileSync(exclude, 'utf8'), userExclude);
      assert.equal(
        [...pathsInAnyCommit(repo)].some((p) => p.startsWith('node_modules/')),
        false,
      );
    } finally {
      await history.close();
    }
  });

  it('the hook in a folder without git: exit 0, nothing written, one stderr line; with --init the prompt becomes a turn', () => {
    const folder = tempDir('avh-nogit-');
    write(folder, 'app.js', 'console.log(1);\n');
    const picture = repoPicture(folder);
    const { env, globalConfig } = isolatedGitEnv('trunk');
    const globalBefore = fs.readFileSync(globalConfig, 'utf8');
    const plain = runCliProcess(['hook', 'claude-code'], {
      cwd: folder,
      env,
      input: hookEvent('UserPromptSubmit', folder, 'Make it blue'),
    });
    assert.equal(plain.code, 0, plain.stderr);
    assert.equal(plain.stdout, '');
    assert.deepEqual(plain.stderr.split('\n').filter(Boolean), [
      'agent-versions: this folder has no git repository; run `agent-versions init` here to keep versions of agent turns',
    ]);
    assert.deepEqual(repoPicture(folder), picture, 'nothing was written');

    const began = runCliProcess(['hook', 'claude-code', '--init'], {
      cwd: folder,
      env,
      input: hookEvent('UserPromptSubmit', folder, 'Make it blue'),
    });
    assert.equal(began.code, 0, began.stderr);
    assert.equal(began.stdout, '');
    assert.equal(
      git(folder, 'symbolic-ref', '--short', 'HEAD').trim(),
      'trunk',
      'git init used the default branch name',
    );
    write(folder, 'app.js', 'console.log("blue");\n');
    const ended = runCliProcess(['hook', 'claude-code', '--init'], {
      cwd: folder,
      env,
      input: hookEvent('Stop', folder),
    });
    assert.equal(ended.code, 0, ended.stderr);
    assert.equal(subjectOf(folder), '[Agent] Make it blue');
    assert.equal(subjectOf(folder, 'HEAD^'), FIRST_BASE_SUBJECT);
    // No identity anywhere: the product's fallback identity, and nothing written to the global config.
    assert.equal(
      git(folder, 'log', '-1', '--format=%an <%ae>').trim(),
      'Agent Version History <agent-versions@localhost>',
    );
    assert.equal(fs.readFileSync(globalConfig, 'utf8'), globalBefore);
    assert.equal(
      gitStatus(folder, 'config', '--local', 'user.name').code,
      1,
      'no identity is set in the repository either',
    );
    assertFsckClean(folder);
  });

  it('init is idempotent: in an existing repository exit 0, the same JSON shape, nothing changed', () => {
    const repo = makeRepo();
    const picture = repoPicture(repo);
    const { env } = isolatedGitEnv('trunk');
    const again = runCliProcess(['init', '--json'], { cwd: path.join(repo), env });
    assert.equal(again.code, 0, again.stderr);
    assert.deepEqual(JSON.parse(again.stdout), { repository: repo, branch: 'main' });
    const text = runCliProcess(['init'], { cwd: repo, env });
    assert.equal(text.code, 0);
    assert.match(text.stdout, /is already a git repository \(branch main\); nothing was changed\./);
    assert.deepEqual(repoPicture(repo), picture);
    const missing = runCliProcess(['init', '--repo', path.join(repo, 'no-such-folder')], { cwd: repo, env });
    assert.equal(missing.code, 2, 'bad input');
    assert.match(missing.stderr, /The folder does not exist\./);
  });
});
