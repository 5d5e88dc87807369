import { HookEvent, hookEventTable, lifecycleAction, parseJsonObject, snakeCaseFields } from '../hooks/hookEvent';
import type { ConnectableAgent } from './agent';
import { vsCodeEvent } from './copilot';

/**
 * `agent-versions hook claude-code`: the command Claude Code's settings run. VS Code's own agent hooks (GitHub
 * Copilot agent mode) read the same settings files (.claude/settings.json, .claude/settings.local.json,
 * ~/.claude/settings.json) and run the same command, with their own payload (copilot.ts). The payload's shape tells
 * the two apart, so one snippet records both agents, each under its own name and chats.
 *
 * Claude Code: https://docs.claude.com/en/docs/claude-code/hooks (UserPromptSubmit, Stop, StopFailure, SessionEnd).
 * Its settings: `hooks.<Event>: [{ "hooks": [{ "type": "command", "command": … }] }]` (events without a matcher).
 */

const WHAT = 'hook event';

const EVENTS = hookEventTable([
  ['UserPromptSubmit', 'begin'],
  ['Stop', 'completed'],
  ['StopFailure', 'errored'],
  ['SessionEnd', 'cancelled'],
]);

export const claudeCode: ConnectableAgent = {
  name: 'claude-code',
  hookHelp: 'claude-code (Claude Code, and VS Code’s own agent hooks, recorded as copilot)',
  events: EVENTS,
  readEvent: async ({ readStdin }) => parseClaudeCodePayload(await readStdin()),
  settings: {
    displayName: 'Claude Code',
    files: { project: '.claude/settings.json', local: '.claude/settings.local.json', user: '.claude/settings.json' },
  },
};

/**
 * Claude Code's payload: snake_case throughout. Its session ids stay unprefixed (turns recorded before stay in
 * their chats).
 */
function parseClaudeCodePayload(raw: string): HookEvent {
  const o = parseJsonObject(raw, WHAT);
  if (o.hook_event_name === undefined && typeof o.hookEventName === 'string') return vsCodeEvent(o);
  const { event, session, cwd, prompt } = snakeCaseFields(o, WHAT);
  return {
    agent: 'claude-code',
    event,
    chatId: session,
    cwd,
    action: lifecycleAction(event, prompt, EVENTS),
  };
}
