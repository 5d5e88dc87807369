import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { AvhError } from '../../src/core/errors';
import type { GitClient } from '../../src/core/git/gitClient';
import { processGit } from '../../src/core/git/gitRunner';
import type { GitRepository } from '../../src/core/git/repository';
import { compareAndSetRef, ZERO_OID } from '../../src/core/git/workingTree';
import { cleanupTempDirs, git, gitStatus, head, makeRepo } from '../support/gitFixtures';

/** The repository with a git client that records each git command's subcommand. */
function counted(root: string): GitRepository & { commands: string[] } {
  const commands: string[] = [];
  const real = processGit();
  const client = Object.create(real) as GitClient;
  client.run = (cwd, args, options) => {
    commands.push(args.find((a, i) => a !== '-c' && args[i - 1] !== '-c') ?? '');
    return real.run(cwd, args, options);
  };
  return {
    root,
    gitDir: path.join(root, '.git'),
    stateDir: path.join(root, '.git', 'agent-versions'),
    git: client,
    commands,
  };
}
const REF = 'refs/agent-versions/base/0b9c6a8e-5f4e-4d7a-9d35-6f1f0c2a4b11';
const reflogOf = (root: string, ref: string) => path.join(root, '.git', 'logs', ...ref.split('/'));

describe('compareAndSetRef: a new private ref as a loose file (no git process), else through git update-ref', () => {
  afterEach(cleanupTempDirs);

  it('creates the ref as git would: git reads it, lists it, fsck is clean, no lock is left', async () => {
    const root = makeRepo();
    const commit = head(root);
    const repo = counted(root);
    await compareAndSetRef(repo, REF, commit, ZERO_OID, 'agent-versions: base snapshot');
    assert.deepEqual(repo.commands, [], 'no git process');
    assert.equal(git(root, 'rev-parse', '--verify', REF).trim(), commit);
    assert.equal(
      git(root, 'for-each-ref', '--format=%(refname) %(objectname)', 'refs/agent-versions/').trim(),
      `${REF} ${commit}`,
    );
    assert.equal(fs.readFileSync(path.join(root, '.git', ...REF.split('/')), 'utf8'), `${commit}\n`);
    assert.ok(!fs.existsSync(path.join(root, '.git', ...REF.split('/')) + '.lock'));
    assert.equal(gitStatus(root, 'fsck', '--no-progress').code, 0);
  });

  it('where git would do more or refuse, git does it: a reflog for every ref, a held lock, a name already packed, a branch', async () => {
    const root = makeRepo();
    const commit = head(root);
    const repo = counted(root);
    // core.logAllRefUpdates=always: git writes the ref's reflog too.
    git(root, 'config', 'core.logAllRefUpdates', 'always');
    await compareAndSetRef(repo, REF, commit, ZERO_OID, 'agent-versions: base snapshot');
    assert.match(fs.readFileSync(reflogOf(root, REF), 'utf8'), /agent-versions: base snapshot/);
    git(root, 'config', '--unset', 'core.logAllRefUpdates');
    // A lock held by someone else: git's refusal, and no ref.
    const locked = 'refs/agent-versions/base/held';
    const lockFile = path.join(root, '.git', ...locked.split('/')) + '.lock';
    fs.mkdirSync(path.dirname(lockFile), { recursive: true });
    fs.writeFileSync(lockFile, '');
    await assert.rejects(compareAndSetRef(repo, locked, commit, ZERO_OID, 'x'), (e: unknown) => e instanceof Error);
    assert.equal(gitStatus(root, 'rev-parse', '--verify', '-q', locked).code, 1);
    // The name exists as a packed ref (at another commit): git's create refuses it, the packed ref stays.
    git(root, 'commit', '-q', '--allow-empty', '-m', 'second');
    const second = head(root);
    const packed = 'refs/agent-versions/base/packed';
    git(root, 'update-ref', packed, commit);
    git(root, 'pack-refs', '--all');
    assert.ok(!fs.existsSync(path.join(root, '.git', ...packed.split('/'))));
    await assert.rejects(
      compareAndSetRef(repo, packed, second, ZERO_OID, 'x'),
      (e: unknown) => e instanceof AvhError && e.reason === 'ref-moved',
    );
    assert.equal(git(root, 'rev-parse', packed).trim(), commit);
    // Not a private ref: git update-ref (a branch gets its reflog).
    await compareAndSetRef(repo, 'refs/heads/made', second, ZERO_OID, 'made by test');
    assert.match(fs.readFileSync(reflogOf(root, 'refs/heads/made'), 'utf8'), /made by test/);
    assert.deepEqual(
      repo.commands.filter((c) => c === 'update-ref'),
      ['update-ref', 'update-ref', 'update-ref', 'update-ref'],
      'each through git',
    );
  });
});
