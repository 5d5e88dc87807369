import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  HookEvent,
  hookEventTable,
  JsonObject,
  lifecycleAction,
  objectField,
  parseJsonObject,
  reportedPath,
  shellCommandOf,
  snakeCaseFields,
} from '../hooks/hookEvent';
import { hookSpecificContext } from '../hooks/contextChannel';
import { beforeToolDeny } from '../hooks/guardAnswers';
import type { ConnectableAgent, ReviewContext, ReviewFinding } from './agent';
import type { ToolWrites } from '../../core/versionHistory';

/**
 * `agent-versions hook gemini`: Google's Gemini CLI (verified against 0.61.0, test/agents/gemini.agent.test.ts).
 * Hooks in `.gemini/settings.json` (project) or `$GEMINI_CLI_HOME/.gemini/settings.json` (user; the home folder
 * without the variable), Claude Code's layout under `hooks` (`timeout` in milliseconds, `name` shown to the user).
 * Gemini registers no hook at all in a folder it does not trust (`~/.gemini/trustedFolders.json`, its trust
 * dialog); project hooks are shown once as a warning, then remembered.
 *
 * - BeforeAgent begins a turn (once per prompt); AfterAgent ends it completed — or cancelled when its
 *   `prompt_response` is exactly "[no response text]", Gemini's stand-in when Escape stopped the answer before any
 *   text came; SessionEnd ends a still-running turn cancelled (SIGINT in prompt mode, and an API error: Gemini
 *   sends no error event and no AfterAgent, so an errored turn is recorded as cancelled).
 * - Gemini reads a hook's stdout (or its stderr when stdout is empty) as JSON; plain text is shown to the user, and
 *   an exit code of 2 blocks the user's prompt: the hook prints nothing on success and never exits 2.
 * - Context channel: BeforeAgent stdout `{"hookSpecificOutput": {"hookEventName": "BeforeAgent",
 *   "additionalContext": …}}` becomes a `<hook_context>…</hook_context>` part after the prompt.
 * - Paths a tool wrote: AfterTool `tool_input.file_path` for `write_file` and `replace`; `run_shell_command` has
 *   only `tool_input.command`.
 * - Before a tool runs: BeforeTool, `run_shell_command`'s `tool_input.command` (issue 34: a checkpoint before a
 *   destructive one). Gemini awaits the hook before it runs the tool (verified with 0.61.0).
 */

const WHAT = 'Gemini hook event';

const EVENTS = hookEventTable([
  ['BeforeAgent', 'begin'],
  ['AfterAgent', 'completed'],
  ['SessionEnd', 'cancelled'],
  ['AfterTool', 'wrote'],
  ['BeforeTool', 'before-tool'],
]);

/** Gemini's stand-in for an answer that never came (0.61: the turn was cancelled before any text). */
const NO_RESPONSE_TEXT = '[no response text]';

/** Milliseconds Gemini gives our hook (its default is 60 s); a hook must not hold up a prompt for long. */
const HOOK_TIMEOUT_MS = 30_000;

export const gemini: ConnectableAgent = {
  name: 'gemini',
  hookHelp: 'gemini (Gemini CLI)',
  events: EVENTS,
  readEvent: async ({ readStdin }) => parseGeminiPayload(await readStdin()),
  toolWrites: geminiToolWrites,
  context: hookSpecificContext,
  guard: beforeToolDeny,
  settings: {
    displayName: 'Gemini CLI',
    files: { project: '.gemini/settings.json' },
    user: {
      dir: (home, env) => path.join(env.GEMINI_CLI_HOME || home, '.gemini'),
      file: 'settings.json',
      help: '~/.gemini/settings.json',
    },
    entryFields: () => ({ name: 'agent-versions', timeout: HOOK_TIMEOUT_MS }),
    userSteps: () => [
      'Gemini CLI runs hooks only in a folder you trust: start `gemini` in the project and trust the folder ' +
        '(it lists a project’s new hooks once when it starts).',
    ],
    review: geminiFolderTrust,
  },
};

function parseGeminiPayload(raw: string): HookEvent {
  const o = parseJsonObject(raw, WHAT);
  const { event, session, cwd, prompt } = snakeCaseFields(o, WHAT);
  const cancelledAnswer = event === 'AfterAgent' && o.prompt_response === NO_RESPONSE_TEXT;
  return {
    agent: 'gemini',
    event,
    chatId: `gemini:${session}`,
    cwd,
    action: cancelledAnswer
      ? { kind: 'end', outcome: 'cancelled' }
      : lifecycleAction(
          event,
          prompt,
          EVENTS,
          () => geminiToolWrites(o, cwd),
          () => (o.tool_name === 'run_shell_command' ? shellCommandOf(objectField(o, 'tool_input').command) : null),
        ),
  };
}

/** write_file and replace name `tool_input.file_path`; run_shell_command names no file. */
function geminiToolWrites(o: JsonObject, cwd: string | undefined): ToolWrites | null {
  if (o.tool_name === 'write_file' || o.tool_name === 'replace')
    return { paths: reportedPath(objectField(o, 'tool_input').file_path, cwd), shell: false };
  return o.tool_name === 'run_shell_command' ? { paths: [], shell: true } : null;
}

/**
 * Gemini's folder trust, read-only from `~/.gemini/trustedFolders.json` (`{"<folder>": "TRUST_FOLDER" |
 * "TRUST_PARENT" | "DO_NOT_TRUST"}`, written by its trust dialog). Without a trusted folder no hook runs, user hooks
 * included; `security.folderTrust.enabled: false` in Gemini's settings turns the check off (not read here).
 */
async function geminiFolderTrust(context: ReviewContext): Promise<ReviewFinding | null> {
  if (context.projectRoot === null) return null;
  const file = path.join(context.env.GEMINI_CLI_HOME || context.home, '.gemini', 'trustedFolders.json');
  let rules: Record<string, unknown> = {};
  try {
    const parsed: unknown = JSON.parse(fs.readFileSync(file, 'utf8'));
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) rules = parsed as typeof rules;
  } catch {
    // no trust given yet
  }
  const root = context.projectRoot;
  const trusted = Object.entries(rules).some(([folder, rule]) => {
    const dir = folder.replace(/\/+$/, '');
    if (rule === 'TRUST_FOLDER') return root === dir || root.startsWith(`${dir}/`);
    if (rule === 'TRUST_PARENT') return root.startsWith(`${path.dirname(dir)}/`) || root === path.dirname(dir);
    return false;
  });
  const facts = { trustedFolders: file, folderTrusted: trusted };
  if (trusted) return { status: 'ok', summary: 'the folder is trusted in Gemini CLI', facts };
  return {
    status: 'warning',
    summary: `Gemini CLI has not been told to trust ${root}; in an untrusted folder it runs no hooks.`,
    fix: 'Start `gemini` in the project and trust the folder.',
    facts,
  };
}
