import { safeMessage } from '../../core/errors';
import type { VersionHistory } from '../../core/versionHistory';
import { agentNamed } from '../agents/registry';
import { classifyArgv, classifyShellCommand, type DestructiveCommand } from './destructiveCommand';
import type { HookEvent } from './hookEvent';
import { ignored, type HookResult } from './hookInput';

/**
 * What a shell command about to run destroys, or null: most commands, and every command the classifier cannot
 * read, return at once (no repository opened, no git run). Loaded on the fast path: no store, no git.
 */
export function destructiveCommandOf(event: HookEvent): DestructiveCommand | null {
  if (event.action.kind !== 'before-command') return null;
  const { command, argv } = event.action;
  return argv ? classifyArgv(argv) : classifyShellCommand(command);
}

/**
 * A destructive command of a running turn (issue 34): the checkpoint is taken before the tool runs. The agent is
 * never held up by our failure: anything that goes wrong is one stderr line and exit 0, the command then runs
 * unchecked (a hook cannot do better than say so).
 */
export async function checkpointHook(
  event: HookEvent,
  found: DestructiveCommand,
  open: () => Promise<VersionHistory | null>,
  stderr: (text: string) => void,
): Promise<HookResult> {
  if (event.action.kind !== 'before-command') return ignored(event);
  let history: VersionHistory | null;
  try {
    history = await open();
  } catch (error) {
    stderr(`agent-versions: no checkpoint was taken before ${found.label}: ${safeMessage(error)}\n`);
    return { ...ignored(event), reason: 'checkpoint-failed' };
  }
  if (!history) return { ...ignored(event), reason: 'no-repository' };
  try {
    const taken = await history.checkpointBeforeCommand({
      chatId: event.chatId,
      command: event.action.command,
      label: found.label,
      reachesIgnored: found.reachesIgnored,
      onlyOverChanges: found.onlyOverChanges,
      ...(found.reachesBuildFolders ? { reachesBuildFolders: true } : {}),
      ...(found.ignoredTargets ? { ignoredTargets: found.ignoredTargets } : {}),
    });
    // The next event of this chat can take the fast path again (the journal changed: fastHook.ts); best effort,
    // like the facts themselves: a failure only sends the next event down this path too.
    await history.recordHookFacts([event.chatId]).catch(() => undefined);
    if (!taken) return ignored(event);
    return {
      agent: event.agent,
      event: event.event,
      action: 'checkpoint',
      turnId: taken.turnId,
      checkpointId: taken.checkpointId,
      command: found.label,
      files: taken.savedFiles,
    };
  } catch (error) {
    stderr(`agent-versions: no checkpoint was taken before ${found.label}: ${safeMessage(error)}\n`);
    return { ...ignored(event), reason: 'checkpoint-failed' };
  } finally {
    await history.close();
  }
}

/**
 * The agent's own answer that stops a destructive command and has the model ask the user first (connect
 * --guard-destructive), or null when the agent has none. The reason names what was recognised (content-free) and the
 * checkpoint taken, never the command's text. `hookAgent` is the hook command's agent (`hook copilot`), whose answer
 * the agent reads: not the agent the turn is recorded as (`copilot-cli`, which names no hook).
 */
export function guardAnswer(hookAgent: string, found: DestructiveCommand, result: HookResult): string | null {
  const guard = agentNamed(hookAgent).guard;
  if (!guard) return null;
  const saved =
    result.action === 'checkpoint' && result.checkpointId !== undefined
      ? ` The working tree was saved first (agent-versions undo --before-command ${result.checkpointId}).`
      : '';
  return guard.answer(
    `Agent Version History stopped this command: \`${found.label}\` can destroy work in the working tree. ` +
      'Do not run it, and do not try another way to the same effect: tell the user what you wanted to run and why, ' +
      `so they can run it themselves if they want it.${saved}`,
  );
}
