import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { AvhError } from '../../src/core/errors';
import { repoPicture } from './assertions';
import { CLI, type CliRun, runCliProcess } from './cliProcess';
import { git, tempDir, testGitEnv } from './gitFixtures';

/**
 * Helpers for the repository shapes of issue 25 (test/unit/repoShapes.test.ts): a hook-based fsmonitor that lags
 * on purpose, the production CLI bundle as a process, object ids in the repository's own hash, and the refusal
 * check ("names the file, changes nothing").
 */

/** What users run: the production entry bundle (built by `npm run build`), not the tsc output. */
export const DIST_CLI = CLI;

export type DistRun = CliRun;

/** Runs the shipped `agent-versions` (dist/cli.js) as a real process. */
export function distCli(
  args: string[],
  options: { cwd: string; input?: string | Buffer; env?: NodeJS.ProcessEnv },
): DistRun {
  return runCliProcess(args, options);
}

export function commitAll(repo: string, message: string): void {
  git(repo, 'add', '-A');
  git(repo, 'commit', '-q', '--allow-empty', '-m', message);
}

/**
 * A v2 fsmonitor hook (`core.fsmonitor` = a script) that answers like a monitor that has caught up ("/": every path
 * may have changed, so git checks them all) until `lag(true)`; from then on it answers "nothing changed since your
 * token", as a daemon that has not seen the latest writes yet. The script lives outside the repository.
 */
export function installLaggingFsmonitor(repo: string): { lag: (on: boolean) => void } {
  const dir = tempDir('avh-fsmonitor-');
  const flag = path.join(dir, 'lagging');
  const script = path.join(dir, 'fsmonitor.sh');
  fs.writeFileSync(
    script,
    [
      '#!/bin/sh',
      '# git runs `hook 2 <token>`; the answer is a token, NUL, then changed paths (NUL-separated).',
      '[ "$1" = 2 ] || exit 1',
      `if [ -e '${flag}' ]; then printf 'lag-token\\0'; else printf 'fresh-%s\\0/\\0' "$(date +%s%N)"; fi`,
      '',
    ].join('\n'),
    { mode: 0o755 },
  );
  git(repo, 'config', 'core.fsmonitor', script);
  git(repo, 'update-index', '--fsmonitor');
  git(repo, 'status', '--porcelain'); // the index now carries the monitor's token and its "valid" bits
  return {
    lag: (on) => (on ? fs.writeFileSync(flag, '') : fs.rmSync(flag, { force: true })),
  };
}

/** `sha1` or `sha256`: the repository's object format. */
export function objectFormat(repo: string): 'sha1' | 'sha256' {
  return git(repo, 'rev-parse', '--show-object-format').trim() === 'sha256' ? 'sha256' : 'sha1';
}

/** The blob id of `data` in the repository's own hash (no filters: the bytes as they are). */
export function blobIdIn(repo: string, data: Buffer): string {
  return crypto.createHash(objectFormat(repo)).update(`blob ${data.length}\0`).update(data).digest('hex');
}

/** Whether the object database holds `oid` at all (loose or packed, reachable or not). */
export function objectExists(repo: string, oid: string): boolean {
  return spawnSync('git', ['cat-file', '-e', oid], { cwd: repo, env: testGitEnv() }).status === 0;
}

/**
 * A refusal that names `file` and changes nothing: the promise fails with an AvhError whose message contains the
 * file's name, and every byte we could have changed is as it was (refs, index, worktree, our markers).
 */
export async function expectRefusalNaming(repo: string, promise: Promise<unknown>, file: string): Promise<AvhError> {
  const before = repoPicture(repo);
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof AvhError, `expected an AvhError, got ${String(error)}`);
    assert.ok(error.message.includes(file), `the message names ${file}: ${error.message}`);
    assert.deepEqual(repoPicture(repo), before, 'a refusal changes nothing');
    return error;
  }
  assert.fail(`expected a refusal naming ${file}`);
}

/** Every path of a commit's tree (as git lists it, `-z`, raw bytes decoded as latin1 so no name is altered). */
export function treePaths(repo: string, rev: string): string[] {
  const r = spawnSync('git', ['ls-tree', '-r', '-z', '--name-only', rev], { cwd: repo, env: testGitEnv() });
  assert.equal(r.status, 0, r.stderr?.toString());
  return r.stdout
    .toString('latin1')
    .split('\0')
    .filter((p) => p.length > 0);
}

let readableCopy: string | null = null;

/**
 * The shipped bundles copied to a folder `nobody` can enter and read (0755 on every level): the checkout may sit
 * under a folder only its owner can enter (a root user's home, `mktemp -d`), where `nobody` cannot load dist/cli.js.
 * The same files byte for byte (every file at dist/'s top level: the CLI's chunks, the launcher, sql.js's wasm).
 */
function readableCli(): string {
  if (readableCopy && fs.existsSync(readableCopy)) return readableCopy;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'avh-dist-for-nobody-'));
  fs.chmodSync(dir, 0o755);
  const dist = path.dirname(DIST_CLI);
  for (const name of fs.readdirSync(dist)) {
    const from = path.join(dist, name);
    if (!fs.statSync(from).isFile()) continue;
    fs.copyFileSync(from, path.join(dir, name));
    fs.chmodSync(path.join(dir, name), 0o644);
  }
  process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
  readableCopy = path.join(dir, path.basename(DIST_CLI));
  return readableCopy;
}

/** True when the real uid is 0 (chmod cannot keep root out, and chown needs it). */
export const runningAsRoot = () => typeof process.getuid === 'function' && process.getuid() === 0;

/**
 * The shipped CLI run as a user the file modes apply to: this process's own, or `nobody` (through runuser) when it is
 * root, which reads and writes through any mode bits. `own` gives a folder to that user (chown when root).
 */
export function unprivileged(repo: string): { cli: (args: string[]) => DistRun; own: (dir: string) => void } {
  if (!runningAsRoot()) return { cli: (args) => distCli(args, { cwd: repo }), own: () => undefined };
  const home = tempDir('avh-nobody-home-');
  const own = (dir: string) => {
    const r = spawnSync('chown', ['-R', '65534:65534', dir]);
    assert.equal(r.status, 0, r.stderr?.toString());
  };
  own(home);
  own(repo);
  return {
    own,
    cli: (args) => {
      const r = spawnSync('runuser', ['-u', 'nobody', '--', process.execPath, readableCli(), ...args], {
        cwd: repo,
        input: '',
        encoding: 'utf8',
        env: { ...testGitEnv(), HOME: home },
        timeout: 60_000,
      });
      return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
    },
  };
}
