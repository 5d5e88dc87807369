import * as path from 'node:path';
import { anchorRef, isAbsolutePath, type TurnAnchor } from '../../core/chats/turnAnchors';
import {
  HookAction,
  HookEvent,
  hookEventTable,
  JsonObject,
  lifecycleAction,
  objectField,
  parseJsonObject,
  shellCommandOf,
  reportedPath,
  snakeCaseFields,
} from '../hooks/hookEvent';
import { hookSpecificContext } from '../hooks/contextChannel';
import { preToolUseDeny } from '../hooks/guardAnswers';
import type { ConnectableAgent } from './agent';
import { vsCodeEvent } from './copilot';
import type { ToolWrites } from '../../core/versionHistory';

/**
 * `agent-versions hook claude-code`: Claude Code (verified against 2.1.197, test/agents/claudeCode.agent.test.ts).
 * https://code.claude.com/docs/en/hooks. Settings: `hooks.<Event>: [{ "hooks": [{ "type": "command", "command" }] }]`
 * in `.claude/settings.json`, `.claude/settings.local.json`, `$CLAUDE_CONFIG_DIR/settings.json` (~/.claude).
 *
 * - UserPromptSubmit begins a turn (and ends the chat's older running turns cancelled: Escape in the interactive
 *   mode sends no event at all), Stop ends it completed, StopFailure errored (an API error; SessionEnd follows
 *   within milliseconds, in either order), SessionEnd cancelled (print mode SIGINT: reason "other"; Ctrl+C twice:
 *   "prompt_input_exit"). Every event of a turn carries its `prompt_id`.
 * - SessionEnd hooks are killed after 1.5 s unless a SessionEnd hook asks for longer (its `timeout`, seconds), less
 *   than our lease wait (hookInput.ts): connect writes a timeout on that entry.
 * - Other agents run these files too. GitHub Copilot CLI runs the project's `.claude/settings*.json` hooks with the
 *   same snake_case payload and `COPILOT_CLI=1` in the hook's environment (verified, 1.0.102): those events are left
 *   to `hook copilot` (copilot.ts, `connect copilot`), so one Copilot turn is never recorded twice. VS Code reads
 *   these files only with `chat.useClaudeHooks` on (default off in 1.139) and sends the same payload with no marker,
 *   so it is recorded as claude-code; VS Code's older camelCase payload is still told apart by its shape.
 * - Context channel (for a note to the model): UserPromptSubmit stdout, best as JSON
 *   `{"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": …}}` — it reaches the model
 *   as a system message "UserPromptSubmit hook additional context: …" (plain stdout arrives too, as "… hook
 *   success: …"). So the hook prints nothing else on stdout.
 * - Paths a tool wrote: PostToolUse `tool_input.file_path` (absolute; also `tool_response.filePath`) for Write and
 *   Edit, `tool_input.notebook_path` for NotebookEdit; Bash has only `tool_input.command`. No MultiEdit in 2.1.197.
 * - Before a tool runs: PreToolUse, Bash's `tool_input.command` (issue 34: a checkpoint before a destructive one).
 */

const WHAT = 'hook event';

const EVENTS = hookEventTable([
  ['UserPromptSubmit', 'begin'],
  ['Stop', 'completed'],
  ['StopFailure', 'errored'],
  ['SessionEnd', 'cancelled'],
  ['PostToolUse', 'wrote'],
  ['PreToolUse', 'before-tool'],
]);

/** Seconds Claude Code lets the SessionEnd hooks run (the largest `timeout` among them; 1.5 s without one). */
const SESSION_END_TIMEOUT_S = 10;

export const claudeCode: ConnectableAgent = {
  name: 'claude-code',
  hookHelp: 'claude-code (Claude Code)',
  events: EVENTS,
  readEvent: async ({ readStdin, env }) => parseClaudeCodePayload(await readStdin(), env),
  toolWrites: claudeCodeToolWrites,
  context: hookSpecificContext,
  guard: preToolUseDeny,
  settings: {
    displayName: 'Claude Code',
    files: { project: '.claude/settings.json', local: '.claude/settings.local.json' },
    user: {
      dir: (home, env) => env.CLAUDE_CONFIG_DIR || path.join(home, '.claude'),
      file: 'settings.json',
      help: '~/.claude/settings.json',
    },
    entryFields: (event): Record<string, number> => (event === 'SessionEnd' ? { timeout: SESSION_END_TIMEOUT_S } : {}),
  },
};

/**
 * Claude Code's payload: snake_case throughout. Its session ids stay unprefixed (turns recorded before stay in
 * their chats).
 */
function parseClaudeCodePayload(raw: string, env: NodeJS.ProcessEnv): HookEvent {
  const o = parseJsonObject(raw, WHAT);
  if (o.hook_event_name === undefined && typeof o.hookEventName === 'string') return vsCodeEvent(o, env);
  const { event, session, cwd, prompt } = snakeCaseFields(o, WHAT);
  const fromCopilotCli = env.COPILOT_CLI === '1';
  const action: HookAction = fromCopilotCli
    ? { kind: 'ignore', reason: 'another-agent' }
    : lifecycleAction(
        event,
        prompt,
        EVENTS,
        () => claudeCodeToolWrites(o, cwd),
        () => (o.tool_name === 'Bash' ? shellCommandOf(objectField(o, 'tool_input').command) : null),
      );
  if (action.kind === 'begin') {
    const anchor = claudeCodeAnchor(o, session);
    if (anchor) action.anchor = anchor;
  }
  return { agent: 'claude-code', event, chatId: session, cwd, action };
}

/**
 * Where the turn sits in the conversation (issue 32): the prompt's `prompt_id` (its transcript entry carries it as
 * `promptId`) and the session file the payload names. Read from the payload only: the transcript is opened when a
 * fork is asked for (src/cli/conversations/claudeCode.ts). A missing or odd value leaves the anchor unknown.
 */
function claudeCodeAnchor(o: JsonObject, session: string): TurnAnchor | undefined {
  const chatRef = anchorRef(session);
  const turnRef = anchorRef(o.prompt_id);
  if (chatRef === undefined || turnRef === undefined || !isAbsolutePath(o.transcript_path)) return undefined;
  return { chatRef, turnRef, transcript: o.transcript_path };
}

/** Write and Edit name `tool_input.file_path`, NotebookEdit `notebook_path` (absolute); Bash names no file. */
function claudeCodeToolWrites(o: JsonObject, cwd: string | undefined): ToolWrites | null {
  const input = objectField(o, 'tool_input');
  switch (o.tool_name) {
    case 'Write':
    case 'Edit':
    case 'MultiEdit':
      return { paths: reportedPath(input.file_path, cwd), shell: false };
    case 'NotebookEdit':
      return { paths: reportedPath(input.notebook_path, cwd), shell: false };
    case 'Bash':
      return { paths: [], shell: true };
    default:
      return null;
  }
}
