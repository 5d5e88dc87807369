import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseArgs, ParseArgsConfig } from 'node:util';
import { AvhError, safeMessage } from '../core/errors';
import { EventLog, formatEvent, silentLog } from '../core/log';
import { leftOutMessage } from '../core/secrets/secretChoices';
import type { SecretFinding } from '../core/secrets/secretScanner';
import { VersionHistory } from '../core/versionHistory';
import { handleClaudeHook, parseHookEvent } from './claudeCodeHook';
import { runRecoverCommand } from './recoverCommand';
import { EXIT, exitCodeFor, UsageError } from './exitCodes';

const USAGE = `Usage: agent-versions [--repo <path>] [--json] [--verbose] <command>

Commands:
  turn begin --chat <id> [--agent <name>] [--title <text>] [--prompt <text> | --prompt-file <path|->]
  turn end <turnId> --outcome completed|cancelled|errored
  hook claude-code            read one Claude Code hook event (JSON) on stdin
  versions [--limit N]        versions of the current branch, newest first
  status                      repository health, running turns, counts
  undo [--turn <id>] [--yes]  undo an agent turn (default: the latest on this branch)
  redo                        redo the last undo, while nothing new happened since
  restore <commit> [--yes]    restore the working tree to a version, as a new [Restore] commit
  recover check|accept|save-and-accept
                              check the repository, use its current version, or save changes and use it

Exit codes: 0 ok; 1 failed and nothing changed; 2 bad usage or input; 3 blocked because recovery is required.`;

const OPTIONS = {
  repo: { type: 'string' },
  json: { type: 'boolean', default: false },
  verbose: { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h', default: false },
  chat: { type: 'string' },
  agent: { type: 'string' },
  title: { type: 'string' },
  prompt: { type: 'string' },
  'prompt-file': { type: 'string' },
  outcome: { type: 'string' },
  limit: { type: 'string' },
  turn: { type: 'string' },
  yes: { type: 'boolean', short: 'y', default: false },
} satisfies ParseArgsConfig['options'];

export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  readStdin: () => Promise<string>;
  cwd: string;
}

type Values = { [K in keyof typeof OPTIONS]?: (typeof OPTIONS)[K]['type'] extends 'boolean' ? boolean : string };

/** Runs one CLI invocation and returns its exit code. Never prints prompts or file contents. */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  let values: Values;
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({ args: [...argv], options: OPTIONS, allowPositionals: true, strict: true }) as { values: Values; positionals: string[] });
  } catch (error) {
    io.stderr(`agent-versions: ${error instanceof Error ? error.message.split('\n')[0] : 'bad arguments'}\n${USAGE}\n`);
    return EXIT.usage;
  }
  if (values.help || positionals.length === 0) {
    (values.help ? io.stdout : io.stderr)(`${USAGE}\n`);
    return values.help ? EXIT.ok : EXIT.usage;
  }
  const log: EventLog = values.verbose
    ? { info: (e, f) => io.stderr(`${formatEvent(e, f)}\n`), warn: (e, f) => io.stderr(`warn ${formatEvent(e, f)}\n`), error: (e, f) => io.stderr(`error ${formatEvent(e, f)}\n`) }
    : silentLog;
  const isHook = positionals[0] === 'hook';
  let history: VersionHistory | undefined;
  try {
    const command = resolveCommand(positionals);
    let repoPath = values.repo ?? io.cwd;
    let hookEvent: ReturnType<typeof parseHookEvent> | undefined;
    if (command === 'hook claude-code') {
      hookEvent = parseHookEvent(await io.readStdin());
      if (!values.repo && hookEvent.cwd) repoPath = hookEvent.cwd;
    }
    // A hook must never hold up the agent for long: it waits only briefly for another process's lease.
    history = await VersionHistory.open(path.resolve(io.cwd, repoPath), { log, leaseWaitMs: isHook ? 3000 : 10_000 });
    for (const notice of history.notices) io.stderr(`agent-versions: ${notice.message}\n`);
    if (command === 'recover') {
      const r = await runRecoverCommand(history, positionals[1] ?? '', values.json ?? false);
      io.stdout(`${values.json ? JSON.stringify(r.json) : r.text}\n`);
      return r.exitCode;
    }
    const result = await dispatch(command, positionals, values, history, io, hookEvent);
    if (result !== undefined) {
      if (values.json) io.stdout(`${JSON.stringify(result.json)}\n`);
      else if (result.text) io.stdout(`${result.text}\n`);
    }
    return EXIT.ok;
  } catch (error) {
    const code = exitCodeFor(error);
    io.stderr(`agent-versions: ${safeMessage(error)}\n`);
    if (code === EXIT.usage && error instanceof UsageError) io.stderr(`${USAGE}\n`);
    if (values.json) io.stdout(`${JSON.stringify({ error: { reason: error instanceof AvhError ? error.reason : 'unexpected', message: safeMessage(error) } })}\n`);
    // Exit code 2 would make Claude Code block the user's prompt: a hook reports bad input as a plain failure.
    return isHook && code === EXIT.usage ? EXIT.failed : code;
  } finally {
    await history?.close();
  }
}

type Command = 'turn begin' | 'turn end' | 'hook claude-code' | 'versions' | 'status' | 'undo' | 'redo' | 'restore' | 'recover';

function resolveCommand(positionals: string[]): Command {
  const [a, b] = positionals;
  const expect = (n: number) => {
    if (positionals.length > n) throw new UsageError(`unexpected argument "${String(positionals[n]).slice(0, 40)}"`);
  };
  if (a === 'turn' && b === 'begin') { expect(2); return 'turn begin'; }
  if (a === 'turn' && b === 'end') { expect(3); return 'turn end'; }
  if (a === 'hook' && b === 'claude-code') { expect(2); return 'hook claude-code'; }
  if (a === 'hook') throw new UsageError('the only hook adapter is "claude-code"');
  if (a === 'versions') { expect(1); return 'versions'; }
  if (a === 'status') { expect(1); return 'status'; }
  if (a === 'undo') { expect(1); return 'undo'; }
  if (a === 'recover') { expect(2); return 'recover'; }
  if (a === 'redo') { expect(1); return 'redo'; }
  if (a === 'restore') {
    if (!b) throw new UsageError('restore needs <commit>');
    expect(2);
    return 'restore';
  }
  throw new UsageError(`unknown command "${positionals.join(' ').slice(0, 60)}"`);
}

interface Output {
  json: unknown;
  text?: string;
}

async function dispatch(command: Command, positionals: string[], values: Values, history: VersionHistory, io: CliIo, hookEvent?: ReturnType<typeof parseHookEvent>): Promise<Output | undefined> {
  switch (command) {
    case 'turn begin': {
      if (!values.chat) throw new UsageError('turn begin needs --chat <id>');
      if (values.prompt !== undefined && values['prompt-file'] !== undefined) throw new UsageError('give --prompt or --prompt-file, not both');
      let prompt = values.prompt ?? '';
      if (values['prompt-file'] !== undefined) prompt = await readPromptFile(values['prompt-file'], io);
      const { turnId, excluded } = await history.beginTurn({ chatId: values.chat, prompt, ...(values.agent ? { agent: values.agent } : {}), ...(values.title ? { chatTitle: values.title } : {}) });
      printLeftOut(io, excluded); // issue 15
      return { json: { turnId }, text: turnId };
    }
    case 'turn end': {
      if (!positionals[2]) throw new UsageError('turn end needs <turnId>');
      if (!values.outcome) throw new UsageError('turn end needs --outcome completed|cancelled|errored');
      const r = await history.endTurn(positionals[2], values.outcome);
      if (r.message) io.stderr(`agent-versions: ${r.message}\n`);
      printLeftOut(io, r.excluded); // issue 15
      return { json: { turnId: r.turnId, outcome: r.outcome, version: r.version, excluded: r.excluded.map((f) => ({ path: f.path, reason: f.rule })) }, text: r.version ? `${r.outcome}: version ${r.version.slice(0, 12)}` : `${r.outcome}: no version${r.reason ? ` (${r.reason})` : ''}` };
    }
    case 'hook claude-code': {
      const r = await handleClaudeHook(history, hookEvent!);
      // stdout of UserPromptSubmit hooks is added to the agent's context: print nothing unless asked for JSON.
      return values.json ? { json: r } : undefined;
    }
    case 'versions': {
      const limit = values.limit === undefined ? 50 : Number(values.limit);
      if (!Number.isInteger(limit) || limit < 1 || limit > 100_000) throw new UsageError('--limit must be a whole number from 1 to 100000');
      const versions = await history.getVersions(limit);
      return {
        json: versions,
        text: versions.map((v) => `${v.oid.slice(0, 10)}  ${v.kind.padEnd(11)} ${new Date(v.time * 1000).toISOString()}  ${v.subject}`).join('\n') || '(no versions)',
      };
    }
    case 'undo':
    case 'redo':
    case 'restore': {
      const options = { confirmUserCommits: values.yes === true };
      let r;
      try {
        r = command === 'undo' ? await history.undo(values.turn, options)
          : command === 'redo' ? await history.redo(options)
            : await history.restore(positionals[1], options);
      } catch (error) {
        if (error instanceof AvhError && error.reason === 'confirmation-required') {
          throw new AvhError('confirmation-required', `${error.message.replace(/ Confirm to continue;/, ' Run again with --yes to continue;')}`, error.details);
        }
        throw error;
      }
      const json = { result: r.result, ...(r.restoreCommit ? { restoreCommit: r.restoreCommit } : {}), ...(r.preserved ? { preserved: r.preserved } : {}), ...(r.turnId ? { turnId: r.turnId } : {}) };
      const text = r.result === 'restored'
        ? `Restored version ${r.target?.slice(0, 10)} as ${r.restoreCommit?.slice(0, 10)}.${r.preserved ? ` Partial changes were saved as an Interrupted entry in Version History (${r.preserved.slice(0, 10)}).` : ''}`
        : r.result === 'no-change' ? 'Nothing to restore: the working tree already matches that version; no commit was made.'
          : r.result === 'nothing-to-undo' ? 'Nothing to undo: no agent turn on this branch is left to undo.'
            : 'Nothing to redo.';
      return { json, text };
    }
    case 'status': {
      const s = await history.status();
      const h = s.health;
      const lines = [
        `repository: ${s.root}`,
        `branch: ${h.branch ?? (h.detached ? '(detached HEAD)' : '(none)')}${h.unborn ? ' (no commits yet)' : ''}`,
        `working tree: ${h.clean ? 'clean' : `${h.counts.staged} staged, ${h.counts.unstaged} modified, ${h.counts.untracked} untracked, ${h.counts.unmerged} unmerged`}`,
        ...(h.operations.length ? [`in progress: ${h.operations.join(', ')}`] : []),
        ...(h.indexLocked ? ['index.lock is held'] : []),
        `turns: ${s.counts.turns} recorded, ${s.counts.runningTurns} running`,
        `recovery: ${s.recovery ? `required (operation ${s.recovery.operationId ?? 'unknown'}, last phase ${s.recovery.lastPhase ?? 'unknown'})` : 'not required'}`,
      ];
      return { json: s, text: lines.join('\n') };
    }
  }
}

/** One stderr line per file left out of a version as a likely secret (its name and rule, never its content). */
function printLeftOut(io: CliIo, excluded: readonly SecretFinding[]): void {
  for (const f of excluded) io.stderr(`agent-versions: ${leftOutMessage(f.path)} (rule: ${f.rule})\n`);
}

async function readPromptFile(file: string, io: CliIo): Promise<string> {
  if (file === '-') return io.readStdin();
  try {
    return fs.readFileSync(path.resolve(io.cwd, file), 'utf8');
  } catch {
    throw new AvhError('invalid-input', 'The --prompt-file could not be read.');
  }
}

function readProcessStdin(): Promise<string> {
  return new Promise((resolve, reject) => {
    if (process.stdin.isTTY) return resolve('');
    const chunks: Buffer[] = [];
    let size = 0;
    process.stdin.on('data', (d: Buffer) => {
      size += d.length;
      if (size > 16 * 1024 * 1024) {
        reject(new AvhError('invalid-input', 'stdin is larger than 16 MiB.'));
        process.stdin.destroy();
      } else chunks.push(d);
    });
    process.stdin.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    process.stdin.on('error', reject);
  });
}

if (require.main === module) {
  runCli(process.argv.slice(2), {
    stdout: (t) => process.stdout.write(t),
    stderr: (t) => process.stderr.write(t),
    readStdin: readProcessStdin,
    cwd: process.cwd(),
  }).then((code) => { process.exitCode = code; });
}
