import {
  HookEvent,
  lifecycleAction,
  optionalString,
  parseJsonObject,
  requiredString,
  snakeCaseFields,
} from './hookEvent';

/**
 * `agent-versions hook claude-code`: the command Claude Code's settings run. VS Code's own agent hooks (GitHub
 * Copilot agent mode) read the same settings files (.claude/settings.json, .claude/settings.local.json,
 * ~/.claude/settings.json) and run the same command, with their own payload: camelCase common fields
 * (`hookEventName`, `sessionId`, `timestamp`) beside snake_case event fields (`prompt`, `stop_hook_active`). The
 * payload's shape tells the two apart, so one snippet records both agents, each under its own name and chats.
 *
 * Claude Code: https://docs.claude.com/en/docs/claude-code/hooks (UserPromptSubmit, Stop, StopFailure, SessionEnd).
 * VS Code: https://code.visualstudio.com/docs/agents/reference/hooks-reference (SessionStart, UserPromptSubmit,
 * PreToolUse, PostToolUse, PreCompact, SubagentStart, SubagentStop, Stop; there is no SessionEnd or StopFailure).
 */

const WHAT = 'hook event';

/** Claude Code's payload: snake_case throughout. Its session ids stay unprefixed (turns recorded before stay in their chats). */
export function parseClaudeCodePayload(raw: string): HookEvent {
  const o = parseJsonObject(raw, WHAT);
  if (o.hook_event_name === undefined && typeof o.hookEventName === 'string') return vsCodeEvent(o);
  const { event, session, cwd, prompt } = snakeCaseFields(o, WHAT);
  return {
    agent: 'claude-code',
    event,
    chatId: session,
    cwd,
    action: lifecycleAction(event, prompt, { Stop: 'completed', StopFailure: 'errored', SessionEnd: 'cancelled' }),
  };
}

/** `agent-versions hook copilot`: a hook file of VS Code's own (.github/hooks/*.json) that names the agent. */
export function parseCopilotPayload(raw: string): HookEvent {
  return vsCodeEvent(parseJsonObject(raw, WHAT));
}

function vsCodeEvent(o: Record<string, unknown>): HookEvent {
  const event = requiredString(o, 'hookEventName', WHAT);
  const session = requiredString(o, 'sessionId', WHAT);
  const cwd = optionalString(o, 'cwd', WHAT);
  const prompt = optionalString(o, 'prompt', WHAT);
  return {
    agent: 'copilot',
    event,
    chatId: `copilot:${session}`,
    cwd,
    action: lifecycleAction(event, prompt, { Stop: 'completed' }),
  };
}
