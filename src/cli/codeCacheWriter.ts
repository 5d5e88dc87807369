/**
 * Writes the code caches of the CLI bundles in the folder named on the command line (scripts/build.mjs runs it with
 * the Node that built them and no flags, as a hook starts it; src/cli/codeCache.ts reads them). Each bundle is
 * compiled exactly as requireBundle compiles it and its top level runs. The hook fast path then records its four
 * cases in a temporary repository (a prompt and a Stop on a clean tree, a prompt that ends an interrupted turn, a
 * Stop that makes a version), so the functions hook events run are in its cache too (V8 compiles a function the first
 * time it is called); when that cannot run here (no git), its cache holds what did run.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createSeededRepository } from '../core/git/initRepository';
import { codeCacheFile, runBundle } from './codeCache';
import type { tryFastHook } from './hooks/fastHook';

/**
 * One turn through the real command (the full path: the chat and the facts), then its prompt and stop through the
 * fast path in this process.
 */
async function warmHookPath(dist: string, fastHook: typeof tryFastHook): Promise<string | null> {
  const repo = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-versions-code-cache-'));
  // Nothing of the user's git configuration (hooks, signing) takes part, and git needs no identity of theirs.
  const env: Record<string, string> = {
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: path.join(repo, '.no-global-config'),
    GIT_AUTHOR_NAME: 'code cache',
    GIT_AUTHOR_EMAIL: 'code-cache@localhost',
    GIT_COMMITTER_NAME: 'code cache',
    GIT_COMMITTER_EMAIL: 'code-cache@localhost',
  };
  Object.assign(process.env, env);
  const run = (command: string, args: string[], input?: string) => {
    const r = spawnSync(command, args, { cwd: repo, input, encoding: 'utf8', env: process.env });
    if (r.status !== 0)
      throw new Error(`${path.basename(command)} ${args.join(' ')}: ${r.error?.message ?? `exit ${r.status}`}`);
  };
  const event = (name: string) =>
    JSON.stringify({
      hook_event_name: name,
      session_id: 'code-cache',
      cwd: repo,
      prompt: name === 'UserPromptSubmit' ? 'warm up' : undefined,
    });
  try {
    await createSeededRepository(repo, { 'file.txt': 'one\n' });
    const cli = path.join(dist, 'cli.js');
    for (const name of ['UserPromptSubmit', 'Stop']) run(process.execPath, [cli, 'hook', 'claude-code'], event(name));
    // The fast path's four cases: a prompt and a Stop on a clean tree, a prompt that ends an interrupted turn (its
    // work in the tree: the base snapshot), and a Stop that makes a version.
    const steps: [string, string | null][] = [
      ['UserPromptSubmit', null],
      ['Stop', null],
      ['UserPromptSubmit', 'two\n'],
      ['UserPromptSubmit', 'three\n'],
      ['Stop', null],
    ];
    for (const [name, writeAfter] of steps) {
      const answer = await fastHook(['hook', 'claude-code'], () => Promise.resolve(event(name)), repo);
      if (answer.kind !== 'done') return `the fast path declined (${answer.reason})`;
      if (writeAfter !== null) fs.writeFileSync(path.join(repo, 'file.txt'), writeAfter);
    }
    return null;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  } finally {
    fs.rmSync(repo, { recursive: true, force: true });
  }
}

async function main(dist: string): Promise<void> {
  const full = runBundle<unknown>(path.join(dist, 'cliMain.js'));
  fs.writeFileSync(codeCacheFile(path.join(dist, 'cliMain.js')), full.script.createCachedData());
  const hook = runBundle<{ tryFastHook: typeof tryFastHook }>(path.join(dist, 'cliHook.js'));
  const notWarmed = await warmHookPath(dist, hook.exports.tryFastHook);
  if (notWarmed !== null)
    process.stderr.write(`code cache: the hook path was not run (${notWarmed}); its cache holds the top level only\n`);
  fs.writeFileSync(codeCacheFile(path.join(dist, 'cliHook.js')), hook.script.createCachedData());
}

main(path.resolve(process.argv[2] ?? '.')).catch((error: unknown) => {
  process.stderr.write(`code cache: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
});
