/**
 * A snapshot planned from a status stages exactly the paths that status listed (issue 36; workingTreeSnapshot.ts):
 * the same trees as walking the whole tree again, in every shape a status can list, with one git process where the
 * walk takes three; and a file changed between our status and our snapshot is never lost: it is in the version, or
 * still on disk and named by `git status`.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { GitClient } from '../../src/core/git/gitClient';
import { processGit } from '../../src/core/git/gitRunner';
import { resolveRepository, type GitRepository } from '../../src/core/git/repository';
import { healthFromStatus, PROBE_ENV, PROBE_STATUS_ARGS, type StatusListing } from '../../src/core/git/statusProbe';
import { TemporaryIndex } from '../../src/core/git/temporaryIndex';
import { commitWorkingTree, writeWorkingTree } from '../../src/core/git/workingTree';
import { VersionHistory } from '../../src/core/versionHistory';
import {
  assertNothingLost,
  cleanupTempDirs,
  contentInventory,
  git,
  makeRepo,
  read,
  write,
} from '../support/gitFixtures';

/**
 * The repository with a git client that records each git command's subcommand, and runs `before(args)` first (a
 * test's edit at an exact moment).
 */
function counted(root: string, before: (args: readonly string[]) => void = () => undefined) {
  const commands: string[] = [];
  const real = processGit();
  const client = Object.create(real) as GitClient;
  client.run = (cwd, args, options) => {
    before(args);
    commands.push(args[0]);
    return real.run(cwd, args, options);
  };
  const gitDir = path.join(root, '.git');
  const repo: GitRepository = { root, gitDir, stateDir: path.join(gitDir, 'agent-versions'), git: client };
  fs.mkdirSync(repo.stateDir, { recursive: true });
  return { repo, commands, client };
}

/** What the probe's status lists now (the health probe's exact command and parser). */
async function listingNow(repo: GitRepository): Promise<StatusListing> {
  const { stdout } = await processGit().run(repo.root, PROBE_STATUS_ARGS, { env: PROBE_ENV });
  return healthFromStatus(repo, stdout).listed;
}

async function snapshotTree(repo: GitRepository, listed?: StatusListing): Promise<{ tree: string; nested: string[] }> {
  const index = TemporaryIndex.create(repo);
  try {
    const snapshot = await writeWorkingTree(repo, index, { listed });
    return { tree: snapshot.realTree, nested: snapshot.nested };
  } finally {
    index.dispose();
  }
}

/** Status-visible paths with uncommitted changes, as `git status --porcelain` names them. */
const named = (root: string) =>
  git(root, 'status', '--porcelain=v1', '--untracked-files=all')
    .split('\n')
    .filter(Boolean)
    .map((l) => l.slice(3));

describe('a snapshot stages exactly the paths its status listed (issue 36)', () => {
  afterEach(cleanupTempDirs);

  it('the same tree as walking the whole tree, in every shape a status lists; one git process before write-tree', async () => {
    const root = makeRepo();
    write(root, 'a.txt', 'a\n');
    write(root, 'dir/b.txt', 'b\n');
    write(root, 'was-file', 'file\n');
    write(root, 'was-dir/x.txt', 'x\n');
    write(root, 'run.sh', 'echo\n');
    write(root, 'staged.txt', 'staged\n');
    write(root, 'with space/ü n.txt', 'odd\n');
    write(root, '.gitignore', '*.log\n');
    git(root, 'add', '-A');
    git(root, 'commit', '-q', '-m', 'files');
    write(root, 'a.txt', 'a, edited\n');
    fs.rmSync(path.join(root, 'dir/b.txt'));
    fs.rmSync(path.join(root, 'was-file'));
    write(root, 'was-file/inside.txt', 'now a folder\n');
    fs.rmSync(path.join(root, 'was-dir'), { recursive: true });
    write(root, 'was-dir', 'now a file\n');
    fs.chmodSync(path.join(root, 'run.sh'), 0o755);
    write(root, 'staged.txt', 'staged, changed\n');
    git(root, 'add', 'staged.txt');
    write(root, 'with space/ü n.txt', 'odd, edited\n');
    write(root, 'new/deep/c.txt', 'new\n');
    write(root, 'new.txt', 'new\n');
    write(root, 'debug.log', 'ignored\n');
    fs.symlinkSync('a.txt', path.join(root, 'link'));
    const nestedRepo = path.join(root, 'nested');
    fs.mkdirSync(nestedRepo);
    git(nestedRepo, 'init', '-q');
    write(root, 'nested/inner.txt', 'not ours\n');

    const walk = counted(root);
    const walked = await snapshotTree(walk.repo);
    const fromStatus = counted(root);
    const listed = await listingNow(fromStatus.repo);
    const staged = await snapshotTree(fromStatus.repo, listed);
    assert.equal(staged.tree, walked.tree);
    assert.deepEqual(staged.nested, walked.nested);
    assert.deepEqual(staged.nested, ['nested']);
    assert.equal(git(root, 'cat-file', '-p', `${staged.tree}:was-file/inside.txt`), 'now a folder\n');
    assert.equal(git(root, 'cat-file', '-p', `${staged.tree}:was-dir`), 'now a file\n');
    assert.match(git(root, 'ls-tree', staged.tree, 'run.sh'), /^100755 /);
    assert.match(git(root, 'ls-tree', staged.tree, 'link'), /^120000 /);
    assert.equal(git(root, 'ls-tree', staged.tree, 'debug.log'), '');
    assert.deepEqual(walk.commands, ['add', 'ls-files', 'update-index', 'write-tree']);
    assert.deepEqual(fromStatus.commands, ['update-index', 'write-tree']);
  });

  it('a clean listing stages nothing: the tree is the index’s, no update-index', async () => {
    const root = makeRepo();
    write(root, 'a.txt', 'a\n');
    git(root, 'add', 'a.txt'); // staged only: the index holds it, the status lists nothing to stage
    const { repo, commands } = counted(root);
    const listed = await listingNow(repo);
    assert.deepEqual(listed, { changed: [], untracked: [], folders: [] });
    const { tree } = await snapshotTree(repo, listed);
    assert.equal(tree, git(root, 'write-tree').trim());
    assert.deepEqual(commands, ['write-tree']);
  });

  it('a file changed between our status and our version is never lost: in the version, or on disk and named', async () => {
    const root = makeRepo();
    write(root, 'listed.txt', 'one\n');
    write(root, 'quiet.txt', 'quiet\n');
    write(root, 'doomed.txt', 'doomed\n');
    git(root, 'add', '-A');
    git(root, 'commit', '-q', '-m', 'files');
    const head = git(root, 'rev-parse', 'HEAD').trim();
    write(root, 'listed.txt', 'two\n');
    write(root, 'new-listed.txt', 'new\n');
    // Every content there is once the tree changed under us (the test's own overwrite and deletion are its own).
    let before = new Set<string>();
    // The status is taken; then, before the snapshot stages anything, the tree changes under it.
    let raced = false;
    const { repo } = counted(root, (args) => {
      if (raced || !args.includes('update-index')) return;
      raced = true;
      write(root, 'listed.txt', 'three\n'); // listed, changed again: the version takes what is there now
      write(root, 'quiet.txt', 'quiet, edited late\n'); // not listed: stays on disk, named by status
      write(root, 'late-new.txt', 'late\n'); // not listed: stays on disk, named by status
      fs.rmSync(path.join(root, 'new-listed.txt')); // listed, gone since: not added
      before = contentInventory(root);
    });
    const listed = await listingNow(repo);
    assert.deepEqual(listed.changed, ['listed.txt']);
    const made = await commitWorkingTree(repo, {
      ref: 'refs/heads/main',
      expected: head,
      parent: head,
      message: 'version\n',
      reflog: 'test: version',
      installIndex: true,
      listed,
    });
    assert.ok(raced, 'the edit ran between the status and the snapshot');
    assert.ok(made.commit);
    assert.equal(git(root, 'show', `${made.commit}:listed.txt`), 'three\n');
    assert.equal(git(root, 'show', `${made.commit}:quiet.txt`), 'quiet\n');
    assert.equal(read(root, 'quiet.txt'), 'quiet, edited late\n');
    assert.equal(read(root, 'late-new.txt'), 'late\n');
    assert.deepEqual(named(root).sort(), ['late-new.txt', 'quiet.txt']);
    assertNothingLost(root, before);
  });

  it('beginTurn: an edit between the gate’s status and the base snapshot stays on disk, and the turn names it', async () => {
    const root = makeRepo();
    write(root, 'README.md', 'edited\n');
    write(root, 'new.txt', 'new\n');
    let raced = false;
    const { client } = counted(root, (args) => {
      if (raced || !args.includes('update-index')) return;
      raced = true;
      write(root, 'late.txt', 'late\n');
    });
    const before = contentInventory(root);
    const history = await VersionHistory.openRepository(await resolveRepository(root, client));
    try {
      const { baseCommit, turnId } = await history.beginTurn({ chatId: 'c', prompt: 'p' });
      assert.ok(raced);
      assert.equal(git(root, 'show', `${baseCommit}:new.txt`), 'new\n');
      assert.equal(git(root, 'show', `${baseCommit}:README.md`), 'edited\n');
      assert.equal(read(root, 'late.txt'), 'late\n');
      // The file made after the status is the running turn's change (not in its base): Undo would name it.
      const { files } = await history.turnChangesSoFar(turnId);
      assert.deepEqual(
        files.map((f) => f.path),
        ['late.txt'],
      );
      assertNothingLost(root, before);
    } finally {
      await history.close();
    }
  });
});
