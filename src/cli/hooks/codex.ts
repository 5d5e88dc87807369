import {
  HookEvent,
  lifecycleAction,
  optionalString,
  parseJsonObject,
  requiredString,
  snakeCaseFields,
} from './hookEvent';

/**
 * `agent-versions hook codex`: OpenAI Codex CLI.
 *
 * - Hooks (~/.codex/hooks.json or <repo>/.codex/hooks.json, the same layout as Claude Code's `hooks` object;
 *   on by default in current Codex, `[features] hooks = false` turns them off): JSON on stdin with
 *   `hook_event_name`, `session_id`, `turn_id`, `cwd`, and `prompt` on UserPromptSubmit. UserPromptSubmit begins a
 *   turn, Stop ends it completed, StopFailure errored. Schemas: openai/codex codex-rs/hooks/schema/generated/.
 * - `notify` (config.toml `notify = [...]`): Codex appends one JSON argument, `{"type": "agent-turn-complete",
 *   "thread-id", "turn-id", "cwd", …}`. It only says a turn finished, never that one starts, so it cannot capture
 *   the pre-turn state: it ends the thread's running turn (begun by the UserPromptSubmit hook) and is otherwise
 *   ignored. The thread id is the session id the hooks send, so both name the same chat.
 */

const WHAT = 'Codex hook event';
const NOTIFY = 'Codex notification';

export function parseCodexPayload(raw: string): HookEvent {
  const { event, session, cwd, prompt } = snakeCaseFields(parseJsonObject(raw, WHAT), WHAT);
  return {
    agent: 'codex',
    event,
    chatId: chatOf(session),
    cwd,
    action: lifecycleAction(event, prompt, { Stop: 'completed', StopFailure: 'errored' }),
  };
}

/** The JSON argument `notify` passes. Only `agent-turn-complete` acts; other types are ignored. */
export function parseCodexNotification(raw: string): HookEvent {
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
