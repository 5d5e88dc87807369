import type { HookAgent } from '../commandLine';
import { parseClaudeCodePayload, parseCopilotPayload } from './claudeCode';
import { parseCodexNotification, parseCodexPayload } from './codex';
import type { HookEvent } from './hookEvent';

// Reading a hook event and the result a hook reports, shared by the full path (runHook.ts) and the fast path (fastHook.ts).

export interface HookResult {
  agent: string;
  event: string;
  action: 'began' | 'ended' | 'ignored';
  /** Ignored because the folder has no git repository (and no --init). */
  reason?: 'no-repository';
  turnId?: string;
  outcome?: string;
  version?: string | null;
  cancelled?: string[];
}

/** Reads the agent's payload into a HookEvent. Bad input throws an 'invalid-input' AvhError naming the problem. */
export async function parseHookInput(request: { agent: HookAgent; readStdin: () => Promise<string>; payload?: string }): Promise<HookEvent> {
  switch (request.agent) {
    case 'claude-code':
      return parseClaudeCodePayload(await request.readStdin());
    case 'copilot':
      return parseCopilotPayload(await request.readStdin());
    case 'codex':
      return request.payload !== undefined ? parseCodexNotification(request.payload) : parseCodexPayload(await request.readStdin());
  }
}

export function ignored(event: HookEvent): HookResult {
  return { agent: event.agent, event: event.event, action: 'ignored' };
}
