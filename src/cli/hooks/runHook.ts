import type { EventLog } from '../../core/log';
import { loadSqlJs } from '../../core/store/sqlJsLoader';
import { recordHookFacts } from '../../core/turns/hookFacts';
import { VersionHistory } from '../../core/versionHistory';
import type { HookAgent } from '../commandLine';
import type { HookEvent } from './hookEvent';
import { HOOK_LEASE_WAIT_MS, hookFolder, HookResult, ignored, parseHookInput } from './hookInput';
import { NO_REPOSITORY_HOOK_LINE, openHookRepository } from '../hookRepository';

export type { HookResult } from './hookInput';

export interface HookRequest {
  agent: HookAgent;
  /** The event on stdin (every agent's hooks). */
  readStdin: () => Promise<string>;
  /** The event as a command-line argument instead (Codex's `notify` appends it there). */
  payload?: string;
  /** The process's folder; --repo and the event's `cwd` are resolved from it. */
  cwd: string;
  repo?: string;
  /** `--init`: in a folder without git, create the repository first (issue 13). */
  init?: boolean;
  log: EventLog;
  stderr: (text: string) => void;
}

/**
 * Every adapter's one way in: parses the event, and only when it begins or ends a turn opens the repository
 * (the event's `cwd`, or --repo) and applies it. An event we do not act on opens nothing and changes nothing.
 */
export async function runHook(request: HookRequest): Promise<HookResult> {
  const event = await parseHookInput(request);
  if (event.action.kind === 'ignore') return ignored(event);
  // The SQLite engine compiles while git finds the repository (the store open awaits the same load; a failure surfaces there).
  loadSqlJs().catch(() => undefined);
  const folder = hookFolder(request.cwd, request.repo, event);
  const repo = await openHookRepository(folder, request.init === true);
  if (!repo) {
    request.stderr(`agent-versions: ${NO_REPOSITORY_HOOK_LINE}\n`);
    return { ...ignored(event), reason: 'no-repository' };
  }
  const history = await VersionHistory.openRepository(repo, { log: request.log, leaseWaitMs: HOOK_LEASE_WAIT_MS });
  try {
    for (const notice of history.notices) request.stderr(`agent-versions: ${notice.message}\n`);
    const result = await applyHookEvent(history, event);
    // The next event of this chat (and of the recently active ones) can then take the fast path (fastHook.ts).
    await recordHookFacts(history.ctx, [event.chatId]);
    return result;
  } finally {
    await history.close();
  }
}

/**
 * A begin first ends the chat's still-running turns as cancelled (an interrupted turn gets no Stop from Claude
 * Code or VS Code), then begins the new one. An end gives the chat's newest running turn the event's outcome and
 * ends older ones cancelled; with no running turn (a Stop after an interrupted prompt, a duplicate) it is ignored.
 */
export async function applyHookEvent(history: VersionHistory, event: HookEvent): Promise<HookResult> {
  const { chatId, agent } = event;
  switch (event.action.kind) {
    case 'begin': {
      const cancelled = await history.cancelRunningTurnsOfChat(chatId);
      const { turnId } = await history.beginTurn({ chatId, prompt: event.action.prompt, agent });
      return { agent, event: event.event, action: 'began', turnId, cancelled };
    }
    case 'end': {
      const { outcome } = event.action;
      const running = await history.runningTurnsOfChat(chatId);
      if (running.length === 0) return ignored(event);
      const cancelled: string[] = [];
      for (const turn of running.slice(0, -1)) {
        await history.endTurn(turn.turnId, 'cancelled');
        cancelled.push(turn.turnId);
      }
      const last = running[running.length - 1];
      const ended = await history.endTurn(last.turnId, outcome);
      return {
        agent,
        event: event.event,
        action: 'ended',
        turnId: last.turnId,
        outcome,
        version: ended.version,
        cancelled,
      };
    }
    case 'ignore':
      return ignored(event);
  }
}
