/**
 * The probe's status served by the user's untracked cache (issue 36; statusProbe.ts `runProbeStatus`): when the
 * index holds a cache that the user's own `git status` built in the normal mode, the probe asks for
 * `--untracked-files=normal` (which git serves from it) and lists the new folders' files itself — and its output
 * is, record for record, what `--untracked-files=all` prints. Real git, real index files.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { processGit } from '../../src/core/git/gitRunner';
import type { GitClient } from '../../src/core/git/gitClient';
import {
  PROBE_ENV,
  PROBE_STATUS_ARGS,
  runProbeStatus,
  untrackedCacheMode,
  untrackedCacheModeOf,
} from '../../src/core/git/statusProbe';
import { cleanupTempDirs, git, makeRepo, write } from '../support/gitFixtures';

function records(stdout: string): string[] {
  return stdout
    .split('\0')
    .filter((r) => r.length > 0)
    .sort();
}

/** A git client that records the commands it runs. */
function recording(): { client: GitClient; commands: string[][] } {
  const real = processGit();
  const commands: string[][] = [];
  const client = Object.create(real) as GitClient;
  client.run = (cwd, args, options) => {
    commands.push([...args]);
    return real.run(cwd, args, options);
  };
  return { client, commands };
}

/** A tree with every shape a new file can take: new folders (nested, with ignored files, odd names), a nested repo. */
function shapes(repo: string): void {
  write(repo, '.gitignore', '*.log\nbuild/\n');
  git(repo, 'add', '.gitignore');
  git(repo, 'commit', '-q', '-m', 'ignore rules');
  write(repo, 'tracked.txt', 'changed\n');
  write(repo, 'top-new.txt', 'new\n');
  write(repo, 'fresh/a.txt', 'a\n');
  write(repo, 'fresh/deep/b.txt', 'b\n');
  write(repo, 'fresh/deep/noise.log', 'ignored\n');
  write(repo, 'only-ignored/x.log', 'ignored\n');
  write(repo, 'build/out.js', 'ignored folder\n');
  write(repo, 'star*dir/:(glob)name.txt', 'odd pathspec characters\n');
  write(repo, 'sp ace/file one.txt', 'spaces\n');
  fs.mkdirSync(path.join(repo, 'empty-new'));
  const nested = path.join(repo, 'fresh', 'vendor');
  fs.mkdirSync(nested, { recursive: true });
  git(nested, 'init', '-q');
  write(nested, 'inner.txt', 'inner\n');
  const topNested = path.join(repo, 'lib');
  fs.mkdirSync(topNested);
  git(topNested, 'init', '-q');
}

describe('the probe served by the untracked cache (issue 36)', () => {
  after(cleanupTempDirs);

  it('an index without an untracked cache: the probe runs --untracked-files=all, as before', async () => {
    const repo = makeRepo();
    shapes(repo);
    assert.equal(untrackedCacheMode(path.join(repo, '.git')), null);
    const { client, commands } = recording();
    const out = await runProbeStatus(repo, path.join(repo, '.git'), client);
    assert.deepEqual(
      commands.map((c) => c[0]),
      ['status'],
    );
    assert.ok(commands[0].includes('--untracked-files=all'));
    const all = git(repo, 'status', ...PROBE_STATUS_ARGS.slice(1));
    assert.deepEqual(records(out), records(all));
  });

  it('a cache built by the user’s git status in the normal mode: --untracked-files=normal, then the new folders’ files — the same records as --untracked-files=all', async () => {
    const repo = makeRepo();
    git(repo, 'config', 'core.untrackedCache', 'true');
    shapes(repo);
    git(repo, 'status', '--porcelain'); // the user's status builds the cache (normal mode) and writes it
    assert.equal(untrackedCacheMode(path.join(repo, '.git')), 'normal');
    const { client, commands } = recording();
    const out = await runProbeStatus(repo, path.join(repo, '.git'), client);
    assert.deepEqual(
      commands.map((c) => c[0]),
      ['status', 'ls-files'],
    );
    assert.ok(commands[0].includes('--untracked-files=normal'));
    const all = processGit().run(repo, PROBE_STATUS_ARGS, { env: PROBE_ENV });
    const expected = records((await all).stdout);
    assert.deepEqual(records(out), expected);
    assert.ok(expected.includes('? fresh/vendor/'), 'the nested repository inside a new folder is listed as git does');
    assert.ok(expected.includes('? star*dir/:(glob)name.txt'), 'pathspec characters are taken literally');
    assert.ok(!expected.some((r) => r.includes('noise.log') || r.includes('only-ignored')), 'ignored files stay out');
  });

  it('no new folder: the status alone (no ls-files)', async () => {
    const repo = makeRepo();
    git(repo, 'config', 'core.untrackedCache', 'true');
    write(repo, 'top-new.txt', 'new\n');
    git(repo, 'status', '--porcelain');
    const { client, commands } = recording();
    const out = await runProbeStatus(repo, path.join(repo, '.git'), client);
    assert.deepEqual(
      commands.map((c) => c[0]),
      ['status'],
    );
    assert.deepEqual(records(out), records(git(repo, 'status', ...PROBE_STATUS_ARGS.slice(1))));
  });

  it('more new folders than a command line should carry: one ls-files over the tree, only their files kept', async () => {
    const repo = makeRepo();
    git(repo, 'config', 'core.untrackedCache', 'true');
    for (let i = 0; i < 300; i++) write(repo, `new-${i}/f.txt`, `${i}\n`);
    git(repo, 'status', '--porcelain');
    const { client, commands } = recording();
    const out = await runProbeStatus(repo, path.join(repo, '.git'), client);
    assert.deepEqual(commands[1], ['ls-files', '-z', '--others', '--exclude-standard']);
    assert.deepEqual(records(out), records(git(repo, 'status', ...PROBE_STATUS_ARGS.slice(1))));
  });

  it('a cache built with status.showUntrackedFiles=all is served to --untracked-files=all: the probe keeps that mode', async () => {
    const repo = makeRepo();
    git(repo, 'config', 'core.untrackedCache', 'true');
    git(repo, 'config', 'status.showUntrackedFiles', 'all');
    shapes(repo);
    git(repo, 'status', '--porcelain');
    assert.equal(untrackedCacheMode(path.join(repo, '.git')), 'all');
    const { client, commands } = recording();
    await runProbeStatus(repo, path.join(repo, '.git'), client);
    assert.ok(commands[0].includes('--untracked-files=all'));
  });

  it('reading the index’s end: a stray "UNTR" in a path is not an extension; no index, no cache', () => {
    assert.equal(untrackedCacheModeOf(Buffer.from('DIRC….UNTR…garbage that does not chain to the checksum')), null);
    assert.equal(untrackedCacheModeOf(Buffer.alloc(0)), null);
    assert.equal(untrackedCacheMode(path.join(makeRepo({ commit: false }), '.git', 'missing')), null);
  });
});
