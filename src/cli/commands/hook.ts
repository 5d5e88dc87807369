import { isAvhError, safeMessage } from '../../core/errors';
import { AGENTS } from '../agents/registry';
import type { CommandContext, CommandOutput, CommandSpec } from '../command';
import { runHook } from '../hooks/runHook';

// The hook fast path (hooks/fastHook.ts, dist/cliHook.js) parses with this spec, so this module and everything it
// imports must load neither sql.js nor xstate: the history is opened through the context (main.ts gives it).

export const spec: CommandSpec = {
  name: 'hook',
  args: [
    { name: 'agent', choices: AGENTS.map((a) => a.name), what: 'hook adapter' },
    { name: 'payload', optional: true },
  ],
  options: ['init', 'tool', 'guard-destructive'],
  summary: 'handle one agent hook event (JSON on stdin); what `connect` installs',
  description:
    'Reads one hook event of the agent as JSON on stdin and begins or ends the matching turn: ' +
    `${AGENTS.map((a) => a.hookHelp).join(', ')}. ` +
    'Events it does not act on exit 0 and open nothing. Prints nothing on stdout (it reaches the agent’s ' +
    'context) except, once, a note in the agent’s context format at the first prompt after an Undo, Redo or ' +
    'Restore changed files (which turn, which files), and never exits 2 (an agent would block the prompt): bad ' +
    'input exits 1 (0 for a tool event, `--tool`: the agent’s tool call is never held up by us). With ' +
    '--guard-destructive, a destructive shell command gets the agent’s own deny answer on stdout. In a folder ' +
    'without git it ' +
    'records nothing, says so in one stderr line and exits 0; with --init it creates the repository first.',
  example: 'echo \'{"hook_event_name":"Stop","session_id":"s1"}\' | agent-versions hook claude-code',
  json:
    '{"agent": string (as recorded: claude-code, codex, copilot, copilot-cli, gemini, opencode), "event": string, ' +
    '"action": "began"|"ended"|"ignored"|"recorded"|"checkpoint", ' +
    '"reason"?: "no-repository"|"another-agent"|"checkpoint-failed"|"invalid-input", "turnId"?: string, ' +
    '"checkpointId"?: string, "command"?: string (what was recognised, content-free), ' +
    '"outcome"?: string, "version"?: string|null, "cancelled"?: string[], "note"?: string, ' +
    '"files"?: number (recorded: files the tool wrote), "shell"?: boolean}',
};

export async function run(c: CommandContext): Promise<CommandOutput> {
  try {
    return await handle(c);
  } catch (error) {
    // A tool event (`--tool`, what connect writes for them) is never failed by bad input: the agent's tool call
    // goes on as if we were not there (exit 0, one stderr line naming the problem, never the payload; nothing
    // written). Lifecycle events still exit 1 on bad input.
    if (c.values.tool !== true || !isAvhError(error, 'invalid-input')) throw error;
    c.stderr(`agent-versions: ${safeMessage(error)} Nothing was recorded for this tool event.\n`);
    return { json: { agent: c.args[0], action: 'ignored', reason: 'invalid-input' } };
  }
}

async function handle(c: CommandContext): Promise<CommandOutput> {
  // stdout of a prompt hook is added to the agent's context: print nothing unless asked for JSON.
  return {
    json: await runHook({
      agent: c.args[0],
      payload: c.args[1],
      readStdin: c.readStdin,
      cwd: c.cwd,
      repo: c.values.repo,
      init: c.values.init === true,
      guardDestructive: c.values['guard-destructive'] === true,
      stderr: c.stderr,
      // With --json the note is in the result instead.
      ...(c.values.json === true ? {} : { printContext: (text: string) => c.stdout(`${text}\n`) }),
      openHookHistory: c.openHookHistory,
    }),
  };
}
