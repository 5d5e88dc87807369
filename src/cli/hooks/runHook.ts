import { noteText } from '../../core/chats/noteText';
import { failpoint } from '../../core/failpoints';
import { endOfChat } from '../../core/turns/turnDecisions';
import { agentNamed } from '../agents/registry';
import type { VersionHistory } from '../../core/versionHistory';
import type { HookEvent } from './hookEvent';
import { hookFolder, HookResult, ignored, parseHookInput } from './hookInput';
import { recordToolEvent } from './toolWriteHook';
import { checkpointHook, destructiveCommandOf, guardAnswer } from './checkpointHook';

export type { HookResult } from './hookInput';

/** What a hook says, once per event, in a folder without git (it records nothing and exits 0). */
export const NO_REPOSITORY_HOOK_LINE =
  'this folder has no git repository; run `agent-versions init` here to keep versions of agent turns';

export interface HookRequest {
  /** A name the hook command admits (agents/registry.ts). */
  agent: string;
  /** The event on stdin (every agent's hooks). */
  readStdin: () => Promise<string>;
  /** The event as a command-line argument instead (Codex's `notify` appends it there). */
  payload?: string;
  /** The process's folder; --repo and the event's `cwd` are resolved from it. */
  cwd: string;
  repo?: string;
  /** `--init`: in a folder without git, create the repository first (issue 13). */
  init?: boolean;
  /** `--guard-destructive`: a destructive command gets the agent's deny answer (checkpointHook.ts guardAnswer). */
  guardDestructive?: boolean;
  stderr: (text: string) => void;
  /**
   * Prints a note to the agent's model through its context channel (the hook's stdout), synchronously. Left out
   * (--json), the note is in the result instead.
   */
  printContext?: (text: string) => void;
  /** Opens the history of the event's repository; null in a folder without git (CommandContext.openHookHistory). */
  openHookHistory: (folder: string, init: boolean) => Promise<VersionHistory | null>;
}

/**
 * Every agent's one way in on the full path: parses the event, and only when it begins or ends a turn opens the
 * repository (the event's `cwd`, or --repo) and applies it. An event we do not act on opens nothing and changes
 * nothing.
 */
export async function runHook(request: HookRequest): Promise<HookResult> {
  const event = await parseHookInput(request);
  if (event.action.kind === 'ignore') return ignored(event);
  if (event.action.kind === 'wrote') return recordToolEvent(event, request.cwd, request.repo);
  const folder = hookFolder(request.cwd, request.repo, event);
  if (event.action.kind === 'before-command') {
    // Only a command that destroys working-tree content opens the repository (issue 34).
    const found = destructiveCommandOf(event);
    if (!found) return ignored(event);
    const result = await checkpointHook(event, found, () => request.openHookHistory(folder, false), request.stderr);
    // The guard (connect --guard-destructive): the agent's deny answer, on its context channel (stdout).
    const denial = request.guardDestructive ? guardAnswer(request.agent, found, result) : null;
    if (denial !== null) request.printContext?.(denial);
    return result;
  }
  const history = await request.openHookHistory(folder, request.init === true);
  if (!history) {
    request.stderr(`agent-versions: ${NO_REPOSITORY_HOOK_LINE}\n`);
    return { ...ignored(event), reason: 'no-repository' };
  }
  try {
    for (const notice of history.notices) request.stderr(`agent-versions: ${notice.message}\n`);
    const result = await applyHookEvent(history, event);
    if (result.note !== undefined && result.turnId !== undefined) {
      // Printed first, then dropped: a hook that dies in between hands the note to the chat's next prompt again.
      failpoint('hook-note:before-print');
      request.printContext?.(agentNamed(request.agent).context(result.note, event.event));
      await history.dropHandedNotes(result.turnId);
    }
    // The next event of this chat (and of the recently active ones) can then take the fast path (fastHook.ts).
    await history.recordHookFacts([event.chatId]);
    return result;
  } finally {
    await history.close();
  }
}

/**
 * A begin first ends the chat's still-running turns as cancelled (an interrupted turn gets no Stop from Claude
 * Code or VS Code), then begins the new one. An end applies to the chat's running turns as endOfChat says.
 */
export async function applyHookEvent(history: VersionHistory, event: HookEvent): Promise<HookResult> {
  const { chatId, agent } = event;
  switch (event.action.kind) {
    case 'begin': {
      const cancelled = await history.cancelRunningTurnsOfChat(chatId);
      const { turnId, notes } = await history.beginTurn(
        { chatId, prompt: event.action.prompt, agent, ...(event.action.anchor ? { anchor: event.action.anchor } : {}) },
        { handNotes: event.hearsContext !== false },
      );
      const note = noteText(notes ?? [], chatId, Date.now());
      return { agent, event: event.event, action: 'began', turnId, cancelled, ...(note !== null ? { note } : {}) };
    }
    case 'end': {
      const { outcome } = event.action;
      const ending = endOfChat(await history.runningTurnsOfChat(chatId));
      if (!ending) {
        // An error right after a cancel re-ends the turn errored (turnDecisions.ts reEnds); anything else is ignored.
        const reEnded = await history.reEndLatestTurnOfChat(chatId, outcome);
        if (!reEnded) return ignored(event);
        return {
          agent,
          event: event.event,
          action: 'ended',
          turnId: reEnded.turnId,
          outcome,
          version: null,
          cancelled: [],
        };
      }
      const cancelled: string[] = [];
      for (const turn of ending.older) {
        await history.endTurn(turn.turnId, 'cancelled');
        cancelled.push(turn.turnId);
      }
      const { last } = ending;
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
    case 'wrote':
    case 'before-command':
      return ignored(event);
  }
}
