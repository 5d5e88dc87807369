import {
  HookEvent,
  hookEventTable,
  lifecycleAction,
  optionalString,
  parseJsonObject,
  requiredString,
  snakeCaseFields,
} from '../hooks/hookEvent';
import type { ConnectableAgent } from './agent';

/**
 * `agent-versions hook codex`: OpenAI Codex CLI.
 *
 * - Hooks (~/.codex/hooks.json or <repo>/.codex/hooks.json, the same layout as Claude Code's `hooks` object;
 *   on by default in current Codex, `[features] hooks = false` turns them off): JSON on stdin with
 *   `hook_event_name`, `session_id`, `turn_id`, `cwd`, and `prompt` on UserPromptSubmit. UserPromptSubmit begins a
 *   turn, Stop ends it completed, StopFailure errored. Schemas: openai/codex codex-rs/hooks/schema/generated/.
 *   (https://developers.openai.com/codex/hooks; the project's .codex is read in a trusted project.) JSON, so
 *   connect's byte-preserving edits apply; config.toml (where `notify` lives) is never edited.
 * - `notify` (config.toml `notify = [...]`): Codex appends one JSON argument, `{"type": "agent-turn-complete",
 *   "thread-id", "turn-id", "cwd", …}`. It only says a turn finished, never that one starts, so it cannot capture
 *   the pre-turn state: it ends the thread's running turn (begun by the UserPromptSubmit hook) and is otherwise
 *   ignored. The thread id is the session id the hooks send, so both name the same chat.
 */

const WHAT = 'Codex hook event';
const NOTIFY = 'Codex notification';

const EVENTS = hookEventTable([
  ['UserPromptSubmit', 'begin'],
  ['Stop', 'completed'],
  ['StopFailure', 'errored'],
]);

export const codex: ConnectableAgent = {
  name: 'codex',
  hookHelp: 'codex (its hooks; or its `notify` JSON given as <payload>)',
  events: EVENTS,
  readEvent: async ({ readStdin, payload }) =>
    payload !== undefined ? parseCodexNotification(payload) : parseCodexPayload(await readStdin()),
  settings: { displayName: 'Codex', files: { project: '.codex/hooks.json', user: '.codex/hooks.json' } },
};

function parseCodexPayload(raw: string): HookEvent {
  const { event, session, cwd, prompt } = snakeCaseFields(parseJsonObject(raw, WHAT), WHAT);
  return {
    agent: 'codex',
    event,
    chatId: chatOf(session),
    cwd,
    action: lifecycleAction(event, prompt, EVENTS),
  };
}

/** The JSON argument `notify` passes. Only `agent-turn-complete` acts; other types are ignored. */
function parseCodexNotification(raw: string): HookEvent {
  const o = parseJsonObject(raw, NOTIFY);
  const type = requiredString(o, 'type', NOTIFY);
  const thread = requiredString(o, 'thread-id', NOTIFY);
  const cwd = optionalString(o, 'cwd', NOTIFY);
  return {
    agent: 'codex',
    event: type,
    chatId: chatOf(thread),
    cwd,
    action: type === 'agent-turn-complete' ? { kind: 'end', outcome: 'completed' } : { kind: 'ignore' },
  };
}

function chatOf(session: string): string {
  return `codex:${session}`;
}
