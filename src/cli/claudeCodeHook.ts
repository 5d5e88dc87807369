import { AvhError } from '../core/errors';
import type { VersionHistory } from '../core/versionHistory';

/** The Claude Code hook events we act on; every other event is acknowledged and ignored. */
export interface ClaudeHookEvent {
  hook_event_name: string;
  session_id: string;
  cwd?: string;
  prompt?: string;
}

export function parseHookEvent(raw: string): ClaudeHookEvent {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    throw new AvhError('invalid-input', 'The hook event on stdin is not valid JSON.');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new AvhError('invalid-input', 'The hook event must be a JSON object.');
  const o = value as Record<string, unknown>;
  if (typeof o.hook_event_name !== 'string') throw new AvhError('invalid-input', 'The hook event has no hook_event_name.');
  if (typeof o.session_id !== 'string' || o.session_id.length === 0) throw new AvhError('invalid-input', 'The hook event has no session_id.');
  if (o.cwd !== undefined && typeof o.cwd !== 'string') throw new AvhError('invalid-input', 'The hook event cwd must be a string.');
  if (o.prompt !== undefined && typeof o.prompt !== 'string') throw new AvhError('invalid-input', 'The hook event prompt must be a string.');
  return { hook_event_name: o.hook_event_name, session_id: o.session_id, cwd: o.cwd as string | undefined, prompt: o.prompt as string | undefined };
}

export interface HookResult {
  event: string;
  action: 'began' | 'ended' | 'ignored';
  turnId?: string;
  outcome?: string;
  version?: string | null;
  cancelled?: string[];
}

/**
 * UserPromptSubmit begins a turn (a still-running turn of the session was interrupted — Claude Code sends no
 * Stop then — so it is ended cancelled first); Stop ends it completed; StopFailure errored; SessionEnd cancels.
 */
export async function handleClaudeHook(history: VersionHistory, event: ClaudeHookEvent): Promise<HookResult> {
  const chatId = event.session_id;
  switch (event.hook_event_name) {
    case 'UserPromptSubmit': {
      const cancelled = await history.cancelRunningTurnsOfChat(chatId);
      const { turnId } = await history.beginTurn({ chatId, prompt: event.prompt ?? '', agent: 'claude-code' });
      return { event: event.hook_event_name, action: 'began', turnId, cancelled };
    }
    case 'Stop':
    case 'StopFailure':
    case 'SessionEnd': {
      const outcome = event.hook_event_name === 'Stop' ? 'completed' : event.hook_event_name === 'StopFailure' ? 'errored' : 'cancelled';
      const running = await history.runningTurnsOfChat(chatId);
      if (running.length === 0) return { event: event.hook_event_name, action: 'ignored' };
      // Older running turns of the session were interrupted; the newest one gets this event's outcome.
      const cancelled: string[] = [];
      for (const turn of running.slice(0, -1)) {
        await history.endTurn(turn.turnId, 'cancelled');
        cancelled.push(turn.turnId);
      }
      const last = running[running.length - 1];
      const ended = await history.endTurn(last.turnId, outcome);
      return { event: event.hook_event_name, action: 'ended', turnId: last.turnId, outcome, version: ended.version, cancelled };
    }
    default:
      return { event: event.hook_event_name, action: 'ignored' };
  }
}
