/**
 * Issue 25, the cost of the smudge-filter pre-check: `check-attr` runs only when some config git reads may define
 * a filter driver (writeBlockers.ts filterDriversMayBeConfigured), and the commits after a turn's version come from
 * the plan's own `git log` when they can be told from it (reverseMerge.ts commitsAfterIn). Real files and real git;
 * the screen's answer for each config source, and that an answer of "none" really means git runs no filter.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { GitClient } from '../../src/core/git/gitClient';
import { processGit } from '../../src/core/git/gitRunner';
import { type CommitRange, commitsAfterIn, commitsSince } from '../../src/core/git/reverseMerge';
import { failingFilters, filterDriversMayBeConfigured } from '../../src/core/git/writeBlockers';
import type { GitRepository } from '../../src/core/git/repository';
import { cleanupTempDirs, git, makeRepo, tempDir, write } from '../support/gitFixtures';

const gitClient = processGit();

function repoAt(root: string): GitRepository {
  return { root, gitDir: path.join(root, '.git'), stateDir: path.join(root, '.git', 'agent-versions'), git: gitClient };
}

/** An environment with no global or system config of its own: HOME an empty folder. */
function bareEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH, HOME: tempDir('avh-home-'), GIT_CONFIG_NOSYSTEM: '1', ...extra };
}

describe('the smudge-filter pre-check runs only where a filter driver may be configured (issue 25)', () => {
  afterEach(cleanupTempDirs);

  it('no config defines a driver: none (a filter attribute alone is a no-op to git)', () => {
    const repo = makeRepo();
    write(repo, '.gitattributes', '*.dat filter=b64\n');
    assert.equal(filterDriversMayBeConfigured(repoAt(repo), bareEnv(), 'linux'), false);
  });

  it('each config source that may define one is found', () => {
    const repo = makeRepo();
    const r = repoAt(repo);
    const home = tempDir('avh-home-');
    const env = (extra: NodeJS.ProcessEnv) => ({ ...bareEnv(), HOME: home, ...extra });
    fs.writeFileSync(path.join(home, '.gitconfig'), '[user]\n\tname = x\n');
    assert.equal(filterDriversMayBeConfigured(r, env({}), 'linux'), false);
    fs.writeFileSync(
      path.join(home, '.gitconfig'),
      '[user]\n\tname = x\n  [Filter "lfs"]\n\tsmudge = git-lfs smudge\n',
    );
    assert.equal(filterDriversMayBeConfigured(r, env({}), 'linux'), true, '~/.gitconfig, any case, indented');
    fs.rmSync(path.join(home, '.gitconfig'));
    fs.mkdirSync(path.join(home, 'xdg', 'git'), { recursive: true });
    fs.writeFileSync(path.join(home, 'xdg', 'git', 'config'), '[include]\n\tpath = other\n');
    assert.equal(
      filterDriversMayBeConfigured(r, env({ XDG_CONFIG_HOME: path.join(home, 'xdg') }), 'linux'),
      true,
      'an include may define anything',
    );
    const global = path.join(home, 'global');
    fs.writeFileSync(global, '[filter "x"]\n');
    assert.equal(filterDriversMayBeConfigured(r, env({ GIT_CONFIG_GLOBAL: global }), 'linux'), true);
    const system = path.join(home, 'system');
    fs.writeFileSync(system, '[filter "x"]\n');
    assert.equal(
      filterDriversMayBeConfigured(r, env({ GIT_CONFIG_NOSYSTEM: '', GIT_CONFIG_SYSTEM: system }), 'linux'),
      true,
    );
    assert.equal(
      filterDriversMayBeConfigured(r, env({ GIT_CONFIG_PARAMETERS: "'filter.x.smudge'='cat'" }), 'linux'),
      true,
    );
    assert.equal(
      filterDriversMayBeConfigured(r, env({ GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'filter.x.smudge' }), 'linux'),
      true,
    );
    assert.equal(filterDriversMayBeConfigured(r, env({}), 'darwin'), true, 'system files git finds elsewhere');
    git(repo, 'config', 'filter.b64.smudge', 'base64 -d');
    assert.equal(filterDriversMayBeConfigured(r, env({}), 'linux'), true, 'the repository config');
  });

  it('a linked worktree: the common config is read', () => {
    const repo = makeRepo();
    const linked = path.join(tempDir('avh-wt-'), 'linked');
    git(repo, 'worktree', 'add', '-q', linked);
    git(repo, 'config', 'filter.b64.smudge', 'base64 -d');
    const gitDir = git(linked, 'rev-parse', '--absolute-git-dir').trim();
    const r = { ...repoAt(linked), gitDir };
    assert.equal(filterDriversMayBeConfigured(r, bareEnv(), 'linux'), true);
  });

  it('a config file that cannot be read (here: a folder where the file should be): in doubt, the check runs', () => {
    const repo = makeRepo();
    const global = path.join(tempDir('avh-home-'), 'global');
    fs.mkdirSync(global);
    assert.equal(filterDriversMayBeConfigured(repoAt(repo), bareEnv({ GIT_CONFIG_GLOBAL: global }), 'linux'), true);
  });

  it('a git that cannot be found (its system file unknown): in doubt, the check runs', () => {
    const repo = makeRepo();
    const lost = {
      ...repoAt(repo),
      git: {
        executable: () => {
          throw new Error('git was not found');
        },
      } as unknown as GitClient,
    };
    assert.equal(filterDriversMayBeConfigured(lost, bareEnv({ GIT_CONFIG_NOSYSTEM: '' }), 'linux'), true);
    assert.equal(filterDriversMayBeConfigured(lost, bareEnv(), 'linux'), false, 'no system file read: no doubt');
  });

  it('failingFilters with no driver configured starts no git process; with one, it finds the failing one', async () => {
    const repo = makeRepo();
    write(repo, '.gitattributes', '*.dat filter=b64\n');
    write(repo, 'a.dat', 'x\n');
    git(repo, 'add', '-A');
    const oid = git(repo, 'rev-parse', ':a.dat').trim();
    const change = { path: 'a.dat', oid, mode: '100644', oldMode: '100644' } as never;
    let runs = 0;
    const counting = {
      ...repoAt(repo),
      git: { run: (...args: Parameters<GitClient['run']>) => (runs++, gitClient.run(...args)) } as GitClient,
    };
    assert.deepEqual(await failingFilters(counting, [change], () => false), []);
    assert.equal(runs, 0);
    git(repo, 'config', 'filter.b64.smudge', 'false');
    assert.deepEqual(await failingFilters(counting, [change], () => true), [{ path: 'a.dat', driver: 'b64' }]);
    assert.ok(runs >= 1);
  });
});

describe('the commits after a version, from the plan’s own log (issue 25)', () => {
  afterEach(cleanupTempDirs);

  const commit = (repo: string, file: string) => {
    write(repo, file, `${file}\n`);
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', file);
    return git(repo, 'rev-parse', 'HEAD').trim();
  };
  const oids = (range: { oid: string }[] | null) => range?.map((c) => c.oid) ?? null;

  it('equals `git log head --not version` when the version descends from the range’s start, else asks git', async () => {
    const repo = makeRepo();
    const r = repoAt(repo);
    const base = git(repo, 'rev-parse', 'HEAD').trim();
    const user = commit(repo, 'user-during-turn.txt');
    const version = commit(repo, 'version.txt');
    commit(repo, 'later-1.txt');
    git(repo, 'checkout', '-q', '-b', 'side', user);
    commit(repo, 'side.txt');
    git(repo, 'checkout', '-q', '-');
    git(repo, 'merge', '-q', '--no-edit', 'side');
    const head = git(repo, 'rev-parse', 'HEAD').trim();
    const range: CommitRange = await commitsSince(r, base, head);
    const expected = oids((await commitsSince(r, version, head)).commits);
    assert.deepEqual(new Set(oids(commitsAfterIn(range, version, base))), new Set(expected));
    assert.equal(expected!.length, 3, 'later-1, side and the merge');
    // A start the version does not descend from (the branch was reset under the turn): git must be asked.
    const unrelated = commit(repo, 'x.txt');
    assert.equal(commitsAfterIn(await commitsSince(r, unrelated, head), version, unrelated), null);
    assert.equal(commitsAfterIn(range, 'f'.repeat(40), base), null, 'a version the range does not list');
  });
});
