/**
 * `agent-versions`, the command (dist/cli.js): a small entry that keeps the common hook events fast. A pre-tool
 * event of a `--tool` entry whose command is harmless is answered here (hooks/toolShortcut.ts), before the rest of
 * the entry (entryRun.ts, dist/cliRun.js) is even compiled: it is most of the entry's code, and compiling it cost a
 * harmless event about 1 ms of its ~2 ms above a bare Node start. Everything else goes on to entryRun.ts.
 * docs/design.md, "Fast hook events".
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { safeMessage } from '../core/errors';
import { EXIT } from './exitCodes';
import { harmlessPreTool } from './hooks/toolShortcut';
import { stdinOnce } from './processStdin';

/** The rest of the entry, beside this file (scripts/build.mjs defines its name); the tsc output's module otherwise. */
declare const AVH_CLI_RUN: string | undefined;
const ENTRY_RUN = typeof AVH_CLI_RUN === 'string' ? AVH_CLI_RUN : 'entryRun.js';

async function main(argv: readonly string[]): Promise<void> {
  const readStdin = stdinOnce();
  if (argv[0] === 'hook') {
    // A pre-tool event whose command runs nothing the classifier recognises (connect's `--tool` entries): answered
    // here, before any hook code loads (hooks/toolShortcut.ts). Stdin is read synchronously: nothing runs meanwhile.
    const fastOff = typeof AVH_PRODUCTION_BUILD === 'undefined' && process.env.AVH_HOOK_FAST === 'off';
    if (!fastOff && argv.includes('--tool') && harmlessPreTool(argv, await readStdin().catch(() => ''))) {
      if (typeof AVH_PRODUCTION_BUILD === 'undefined' && process.env.AVH_HOOK_PATH_LOG)
        fs.appendFileSync(process.env.AVH_HOOK_PATH_LOG, 'entry\n');
      process.exit(EXIT.ok);
    }
  }
  // Loaded by a path, not an import: esbuild leaves this require alone, so the shortcut above never compiles it.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const rest = require(path.join(__dirname, ENTRY_RUN)) as typeof import('./entryRun');
  await rest.runEntry(argv, readStdin);
}

main(process.argv.slice(2)).catch((error: unknown) => {
  process.stderr.write(`agent-versions: ${safeMessage(error)}\n`);
  process.exitCode = EXIT.failed;
});
