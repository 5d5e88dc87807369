import { guessRepositoryFromFiles, stateDirOf } from '../../core/git/repository';
import { recordToolWrites } from '../../core/turns/toolWrites';
import type { HookEvent } from './hookEvent';
import { hookFolder, HookResult, ignored } from './hookInput';

/**
 * A tool event that wrote files (or ran a shell command): one line appended to its chat's file under the
 * repository's state folder (core/turns/toolWrites.ts), on both paths the same way — no store, no git process, no
 * lease. The turn it belongs to is the chat's turn running at that moment (the turn's end folds the lines of its
 * time window). In a folder without git, or one Version History never recorded a turn in, nothing is written.
 */
export function recordToolEvent(event: HookEvent, cwd: string, repoOption: string | undefined): HookResult {
  if (event.action.kind !== 'wrote') return ignored(event);
  const found = guessRepositoryFromFiles(hookFolder(cwd, repoOption, event));
  if (!found) return { ...ignored(event), reason: 'no-repository' };
  const { paths, shell } = event.action;
  const recorded = recordToolWrites(stateDirOf(found.gitDir), found.root, event.chatId, { paths, shell });
  if (recorded === null) return { ...ignored(event), reason: 'no-repository' };
  return { agent: event.agent, event: event.event, action: 'recorded', files: recorded.length, shell };
}
