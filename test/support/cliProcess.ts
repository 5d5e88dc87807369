import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { testGitEnv } from './gitFixtures';

/** The compiled CLI entry (tsc output), run as a real process. */
export const CLI = path.resolve(__dirname, '../../src/cli/main.js');

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

export function runCliProcess(
  args: string[],
  options: { cwd?: string; input?: string; env?: NodeJS.ProcessEnv } = {},
): CliRun {
  const r = spawnSync(process.execPath, [CLI, ...args], {
    cwd: options.cwd,
    input: options.input ?? '',
    encoding: 'utf8',
    env: { ...testGitEnv(), ...options.env },
    timeout: 60_000,
  });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

export function cliJson<T>(args: string[], options: { cwd?: string; input?: string; env?: NodeJS.ProcessEnv } = {}): T {
  const r = runCliProcess([...args, '--json'], options);
  if (r.code !== 0) throw new Error(`agent-versions ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
  return JSON.parse(r.stdout) as T;
}
