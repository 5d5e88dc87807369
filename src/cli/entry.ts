/**
 * `agent-versions`, the command (dist/cli.js): a small entry that keeps the common hook events fast. A `hook`
 * command first tries the fast path (hooks/fastHook.ts: no sql.js, no simple-git, this small bundle only); every
 * other command, and a hook event the fast path declines, loads the full CLI (main.ts, bundled as dist/cliMain.js)
 * and runs it unchanged. docs/design.md, "Fast hook events".
 */
import * as path from 'node:path';
import { safeMessage } from '../core/errors';
import { EXIT } from './exitCodes';
import { tryFastHook } from './hooks/fastHook';
import { stdinOnce } from './processStdin';

/** The full CLI beside this file: dist/cliMain.js in the bundles (scripts/build.mjs defines it), main.js in tsc output. */
declare const AVH_CLI_MAIN: string | undefined;
const FULL_CLI = typeof AVH_CLI_MAIN === 'string' ? AVH_CLI_MAIN : 'main.js';

async function main(argv: readonly string[]): Promise<void> {
  const readStdin = stdinOnce();
  if (argv[0] === 'hook') {
    const fast = await tryFastHook(argv, readStdin, process.cwd());
    if (fast.kind === 'done') {
      // Like the full path: stdout reaches the agent's context, so only --json prints.
      if (fast.json) process.stdout.write(`${JSON.stringify(fast.result)}\n`);
      process.exitCode = EXIT.ok;
      return;
    }
  }
  // Loaded by a path, not an import: esbuild leaves this require alone, so the full CLI stays its own bundle that
  // only the commands needing it load (and no dynamic import() wraps modules: see main.ts).
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const full = require(path.join(__dirname, FULL_CLI)) as typeof import('./main');
  full.runCliProcess(argv, readStdin);
}

main(process.argv.slice(2)).catch((error: unknown) => {
  process.stderr.write(`agent-versions: ${safeMessage(error)}\n`);
  process.exitCode = EXIT.failed;
});
