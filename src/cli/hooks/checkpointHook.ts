import { safeMessage } from '../../core/errors';
import type { VersionHistory } from '../../core/versionHistory';
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
    });
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
