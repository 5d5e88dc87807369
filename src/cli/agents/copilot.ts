import {
  HookEvent,
  hookEventTable,
  JsonObject,
  lifecycleAction,
  optionalString,
  parseJsonObject,
  requiredString,
} from '../hooks/hookEvent';
import type { Agent } from './agent';

/**
 * VS Code's own agent hooks (GitHub Copilot agent mode), recorded as `copilot`: camelCase common fields
 * (`hookEventName`, `sessionId`, `timestamp`) beside snake_case event fields (`prompt`, `stop_hook_active`).
 * `agent-versions hook copilot` is for a hook file of VS Code's own (.github/hooks/*.json) that names the agent;
 * VS Code also runs the Claude Code settings' command, whose payload claudeCode.ts hands here by its shape.
 * https://code.visualstudio.com/docs/agents/reference/hooks-reference (SessionStart, UserPromptSubmit, PreToolUse,
 * PostToolUse, PreCompact, SubagentStart, SubagentStop, Stop; there is no SessionEnd or StopFailure).
 */

const WHAT = 'hook event';
const NAME = 'copilot';

const EVENTS = hookEventTable([
  ['UserPromptSubmit', 'begin'],
  ['Stop', 'completed'],
]);

export const copilot: Agent = {
  name: NAME,
  hookHelp: NAME,
  events: EVENTS,
  readEvent: async ({ readStdin }) => vsCodeEvent(parseJsonObject(await readStdin(), WHAT)),
};

/** A VS Code payload; its chats get the agent's name as a prefix (`copilot:<sessionId>`). */
export function vsCodeEvent(o: JsonObject): HookEvent {
  const event = requiredString(o, 'hookEventName', WHAT);
  const session = requiredString(o, 'sessionId', WHAT);
  const cwd = optionalString(o, 'cwd', WHAT);
  const prompt = optionalString(o, 'prompt', WHAT);
  return {
    agent: NAME,
    event,
    chatId: `${NAME}:${session}`,
    cwd,
    action: lifecycleAction(event, prompt, EVENTS),
  };
}
