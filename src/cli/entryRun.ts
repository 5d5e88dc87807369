/**
 * The CLI's entry, past its shortcut (entry.ts answers a harmless pre-tool event before this file loads): a `hook`
 * command starts the fast path's one git process first (hooks/earlyProbe.ts), then loads the fast path
 * (hooks/fastHook.ts, dist/cliHook.js: no sql.js, no xstate) while it runs; every other command, and a hook event
 * the fast path declines, loads the full CLI (main.ts, dist/cliMain.js) and runs it unchanged.
 * docs/design.md, "Fast hook events".
 */
import * as path from 'node:path';
import { requireBundle } from './codeCache';
import { EXIT } from './exitCodes';
import { startEarlyProbe } from './hooks/earlyProbe';
import { largeRepositoryHintOnce } from '../core/git/largeRepository';
import { stateDirOf } from '../core/git/repository';
import { handOverStatus } from '../core/git/statusProbe';

/** The bundles beside this file (scripts/build.mjs defines their names); the tsc output's modules otherwise. */
declare const AVH_CLI_MAIN: string | undefined;
declare const AVH_CLI_HOOK: string | undefined;
const FULL_CLI = typeof AVH_CLI_MAIN === 'string' ? AVH_CLI_MAIN : 'main.js';
const FAST_HOOK = typeof AVH_CLI_HOOK === 'string' ? AVH_CLI_HOOK : 'hooks/fastHook.js';

// Loaded by a path, not an import: esbuild leaves these requires alone, so each bundle is loaded only by the
// commands that need it (and no dynamic import() wraps modules in named initializers: see main.ts); from the code
// cache the build wrote beside it, when this Node has one (codeCache.ts).
function load<T>(file: string): T {
  return requireBundle<T>(path.join(__dirname, file));
}

/** Runs the command `argv`; `readStdin` is the process's one reading of stdin (processStdin.ts stdinOnce). */
export async function runEntry(argv: readonly string[], readStdin: () => Promise<string>): Promise<void> {
  if (argv[0] === 'hook') {
    // The status starts and stdin is asked for first; the fast path's code loads while both run.
    const early = startEarlyProbe(argv, readStdin, process.cwd());
    const fastHook = load<typeof import('./hooks/fastHook')>(FAST_HOOK);
    const probe = await early;
    const fast = await fastHook.tryFastHook(argv, readStdin, process.cwd(), probe);
    // Declined: the full path's gate takes the status already run instead of running its own (statusProbe.ts).
    if (fast.kind === 'declined' && probe) handOverStatus(probe.root, probe.status);
    // A large repository without an untracked cache: one line to stderr, the first time (largeRepository.ts).
    const hint = probe ? largeRepositoryHintOnce(probe.gitDir, stateDirOf(probe.gitDir)) : null;
    if (hint) process.stderr.write(`${hint}\n`);
    if (fast.kind === 'done') {
      // Everything is written (the record fsynced, the facts renamed, the lease released), so the process ends now
      // instead of when Node has closed its last handles (~5 ms per event here). Like the full path: stdout
      // reaches the agent's context, so only --json prints, and the exit waits until that write is out.
      // A guard's deny answer (connect --guard-destructive) is the agent's to read, without --json.
      const out = fast.json
        ? `${JSON.stringify(fast.result)}\n`
        : fast.stdout !== undefined
          ? `${fast.stdout}\n`
          : null;
      if (out !== null) process.stdout.write(out, () => process.exit(EXIT.ok));
      else process.exit(EXIT.ok);
      return;
    }
  }
  load<typeof import('./main')>(FULL_CLI).runCliProcess(argv, readStdin);
}
