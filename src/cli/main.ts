import * as path from 'node:path';
import * as v8 from 'node:v8';
import { AvhError, safeMessage } from '../core/errors';
import { EventLog, formatEvent, silentLog } from '../core/log';
import type { CommandOutput } from './command';
import { commandHelp, generalUsage, usageFor } from './commandHelp';
import { commandNamed, COMMANDS } from './commandLine';
import { intentOf, Invocation, parseCommandLine } from './commandParser';
import { CliError, EXIT, exitCodeFor, UsageError } from './exitCodes';
import { historyOpeners } from './historyOpener';
import { CLI_VERSION } from './installation';
import { readProcessStdin } from './processStdin';

// Imports stay static: a dynamic import() makes esbuild wrap every module it reaches in a named lazy initializer,
// which would leave test-only module names (failpoints) in the production bundle (test/unit/packaging.test.ts).

export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  readStdin: () => Promise<string>;
  cwd: string;
}

/** Runs one CLI invocation and returns its exit code. Never prints prompts or file contents. */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  // Exit code 2 would make Claude Code block the user's prompt: a hook reports bad input as a plain failure.
  const intent = intentOf(argv);
  const isHook = intent.hook;
  let json = intent.json;
  try {
    const invocation = parseCommandLine(argv, COMMANDS);
    json = invocation.values.json === true;
    const output = await run(invocation, io);
    if (output.text !== undefined || json) io.stdout(`${json ? JSON.stringify(output.json) : output.text}\n`);
    return output.exitCode ?? EXIT.ok;
  } catch (error) {
    const code = exitCodeFor(error);
    // Our own errors carry messages written for people; anything else is reduced to its class (privacy).
    const message = error instanceof CliError ? error.message : safeMessage(error);
    io.stderr(`agent-versions: ${message}\n`);
    if (error instanceof UsageError) io.stderr(`\n${usageFor(COMMANDS, error.command)}\n`);
    if (json) {
      const reason =
        error instanceof AvhError
          ? error.reason
          : error instanceof UsageError
            ? 'usage'
            : error instanceof CliError
              ? 'failed'
              : 'unexpected';
      io.stdout(`${JSON.stringify({ error: { reason, message } })}\n`);
    }
    return isHook && code === EXIT.usage ? EXIT.failed : code;
  }
}

async function run(invocation: Invocation, io: CliIo): Promise<CommandOutput> {
  const { values } = invocation;
  switch (invocation.kind) {
    case 'version':
      return { json: { version: CLI_VERSION }, text: `agent-versions ${CLI_VERSION}` };
    case 'help': {
      const text = invocation.topic ? invocation.topic.map(commandHelp).join('\n\n') : generalUsage(COMMANDS);
      return { json: { help: text }, text };
    }
    case 'run':
      break;
  }
  const log: EventLog = values.verbose
    ? {
        info: (e, f) => io.stderr(`${formatEvent(e, f)}\n`),
        warn: (e, f) => io.stderr(`warn ${formatEvent(e, f)}\n`),
        error: (e, f) => io.stderr(`error ${formatEvent(e, f)}\n`),
      }
    : silentLog;
  return commandNamed(invocation.command).run({
    args: invocation.args,
    values,
    folder: path.resolve(io.cwd, values.repo ?? '.'),
    cwd: io.cwd,
    readStdin: io.readStdin,
    stdout: io.stdout,
    stderr: io.stderr,
    log,
    ...historyOpeners(log),
  });
}

if (require.main === module) {
  // Run directly (the tsc output the tests spawn); the shipped command is entry.ts, which loads this bundle.
  runCliProcess(process.argv.slice(2), readProcessStdin);
}

/** Runs the CLI as this process: exit code, output, and never Node's default error report. */
export function runCliProcess(argv: readonly string[], readStdin: () => Promise<string>): void {
  // sql.js's wasm is compiled by V8's baseline compiler only: a process that lives for one command gains nothing
  // from the optimizing tier, and V8 finishes that background compilation before the process can exit (~300 ms
  // per hook event here; docs/design.md). Set before any wasm is compiled, as flags must be; only in the CLI's own
  // process, never in one that imports runCli (tests), whose wasm may already be compiled.
  v8.setFlagsFromString('--liftoff-only');
  runCli(argv, {
    stdout: (t) => process.stdout.write(t),
    stderr: (t) => process.stderr.write(t),
    readStdin,
    cwd: process.cwd(),
  }).then(
    (code) => {
      process.exitCode = code;
    },
    // Never Node's default report: it would print the error's properties (a git error keeps git's stderr).
    (error: unknown) => {
      process.stderr.write(`agent-versions: ${safeMessage(error)}\n`);
      process.exitCode = EXIT.failed;
    },
  );
}
