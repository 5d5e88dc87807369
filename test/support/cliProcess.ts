import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { testGitEnv } from './gitFixtures';

const ROOT = path.resolve(__dirname, '../../..');

/**
 * The shipped command: dist/cli.js, the production entry that loads dist/cliMain.js or dist/cliHook.js (each with its
 * own copy of the core), exactly as users and agents run it. Every CLI test runs it (`npm run build` writes it).
 */
export const CLI = path.join(ROOT, 'dist/cli.js');

/**
 * The same three bundles with the test hooks kept (failpoints, AVH_HOOK_PATH_LOG, AVH_HOOK_FAST): the test build's
 * dist/cli.js (scripts/build.mjs). Only for runs that need a hook; the production CLI ignores them.
 */
export const TEST_BUILD_CLI = path.join(ROOT, 'dist/test-extension/dist/cli.js');

for (const file of [CLI, TEST_BUILD_CLI])
  if (!fs.existsSync(file)) throw new Error(`${file} is missing: run \`npm run build\` first`);

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

export interface CliOptions {
  cwd?: string;
  input?: string | Buffer;
  env?: NodeJS.ProcessEnv;
  /** The command to run: CLI (the default) or TEST_BUILD_CLI. */
  cli?: string;
}

export function runCliProcess(args: string[], options: CliOptions = {}): CliRun {
  const r = spawnSync(process.execPath, [options.cli ?? CLI, ...args], {
    cwd: options.cwd,
    input: options.input ?? '',
    encoding: 'utf8',
    env: { ...testGitEnv(), ...options.env },
    timeout: 60_000,
    maxBuffer: 64 * 1024 * 1024,
  });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

export function cliJson<T>(args: string[], options: CliOptions = {}): T {
  const r = runCliProcess([...args, '--json'], options);
  if (r.code !== 0) throw new Error(`agent-versions ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
  return JSON.parse(r.stdout) as T;
}
