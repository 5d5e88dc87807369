/**
 * A snapshot planned from a status that listed no new file skips its `ls-files --others` (workingTreeSnapshot.ts
 * noUntracked): the same trees, one git process fewer. And beginTurn asks for that only when the status said so.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { GitClient } from '../../src/core/git/gitClient';
import { processGit } from '../../src/core/git/gitRunner';
import type { GitRepository } from '../../src/core/git/repository';
import { TemporaryIndex } from '../../src/core/git/temporaryIndex';
import { writeWorkingTree } from '../../src/core/git/workingTree';
import { VersionHistory } from '../../src/core/versionHistory';
import { cleanupTempDirs, git, makeRepo, write } from '../support/gitFixtures';

/** The repository with a git client that records each git command's subcommand. */
function counted(root: string): { repo: GitRepository; commands: string[] } {
  const commands: string[] = [];
  const real = processGit();
  const git = Object.create(real) as GitClient;
  git.run = (cwd, args, options) => {
    commands.push(args[0]);
    return real.run(cwd, args, options);
  };
  const gitDir = path.join(root, '.git');
  return { repo: { root, gitDir, stateDir: path.join(gitDir, 'agent-versions'), git }, commands };
}

describe('a snapshot with no new files skips listing them (noUntracked)', () => {
  afterEach(cleanupTempDirs);

  it('the same tree with and without, tracked edits and a deletion; one git process fewer', async () => {
    const root = makeRepo();
    write(root, 'a.txt', 'a\n');
    write(root, 'dir/b.txt', 'b\n');
    git(root, 'add', '-A');
    git(root, 'commit', '-q', '-m', 'files');
    write(root, 'a.txt', 'a, edited\n');
    fs.rmSync(path.join(root, 'dir/b.txt'));
    const trees: string[] = [];
    const runs: string[][] = [];
    for (const noUntracked of [false, true]) {
      const { repo, commands } = counted(root);
      fs.mkdirSync(repo.stateDir, { recursive: true });
      const index = TemporaryIndex.create(repo);
      try {
        const snapshot = await writeWorkingTree(repo, index, { noUntracked });
        trees.push(snapshot.realTree);
      } finally {
        index.dispose();
      }
      runs.push(commands);
    }
    assert.equal(trees[0], trees[1]);
    assert.deepEqual(runs[0], ['add', 'ls-files', 'write-tree']);
    assert.deepEqual(runs[1], ['add', 'write-tree']);
  });

  it('beginTurn with a new file in the tree still lists it (the status saw it): the base snapshot holds it', async () => {
    const root = makeRepo();
    write(root, 'README.md', 'edited\n');
    write(root, 'new.txt', 'new\n');
    const history = await VersionHistory.open(root);
    try {
      const { baseCommit } = await history.beginTurn({ chatId: 'c', prompt: 'p' });
      assert.equal(git(root, 'show', `${baseCommit}:new.txt`), 'new\n');
      assert.equal(git(root, 'show', `${baseCommit}:README.md`), 'edited\n');
    } finally {
      await history.close();
    }
  });
});
