import { AvhError } from '../../core/errors';
import {
  type ConfirmationWords,
  laterWorkEverythingRefusal,
  laterWorkRefusal,
  otherChatsRefusal,
  userCommitsRefusal,
} from '../../core/restore/restoreCopy';
import type { RestoreOptions, RestoreResult } from '../../core/restore/restoreService';
import type { VersionHistory } from '../../core/versionHistory';
import { CommandContext, CommandOutput, withHistory } from '../command';
import { restoreJson, restoreText } from '../output';

/**
 * What undo, undo-file, redo and restore share: the confirmation the options give, the refusal's advice, the
 * output.
 */
export function runRestoreCommand(
  c: CommandContext,
  restore: (history: VersionHistory, options: RestoreOptions) => Promise<RestoreResult & { broughtBack?: number }>,
): Promise<CommandOutput> {
  const { values } = c;
  // --only everything is the choice itself: it confirms taking later work away, as --yes does.
  // Only --yes confirms changing files another chat wrote (docs/design/two-chats.md).
  const options = {
    confirmUserCommits: values.yes === true || values.only === 'everything',
    confirmOtherChats: values.yes === true,
  };
  return withHistory(c, async (history) => {
    try {
      const r = await restore(history, options);
      if (r.notice) c.stderr(`agent-versions: ${r.notice}\n`);
      const json = {
        ...restoreJson(r),
        ...(r.scope ? { scope: r.scope } : {}),
        ...(r.otherChatFiles ? { otherChatFiles: r.otherChatFiles } : {}),
        ...(r.broughtBack !== undefined ? { broughtBack: r.broughtBack } : {}),
      };
      const back = r.broughtBack
        ? ` ${r.broughtBack} ignored file${r.broughtBack === 1 ? '' : 's'} the command could delete ` +
          `${r.broughtBack === 1 ? 'was' : 'were'} written back.`
        : '';
      return { json, text: undoText(r) + back };
    } catch (error) {
      if (error instanceof AvhError && error.reason === 'confirmation-required' && error.details.planChanged !== true) {
        // The same refusal in the CLI's words: how to confirm is a flag here.
        const { choice, laterWork, count, otherChats, files } = error.details;
        const message =
          typeof otherChats === 'string' && typeof files === 'string'
            ? otherChatsRefusal(otherChats.split('\n'), files.split('\n'), CONFIRM_WITH_FLAGS)
            : typeof laterWork !== 'string'
              ? userCommitsRefusal(Number(count), CONFIRM_WITH_FLAGS)
              : choice === true
                ? laterWorkRefusal(laterWork, CONFIRM_WITH_FLAGS)
                : laterWorkEverythingRefusal(laterWork, CONFIRM_WITH_FLAGS);
        throw new AvhError('confirmation-required', message, error.details);
      }
      throw error;
    }
  });
}

const CONFIRM_WITH_FLAGS: ConfirmationWords = {
  choose: 'Run again with --only turn or --only everything; nothing was changed.',
  confirm: 'Run again with --yes to continue; nothing was changed.',
};

/** restoreText, naming what an Undo that keeps later work took back. */
function undoText(r: RestoreResult): string {
  if (r.result !== 'restored' || !r.scope || r.scope === 'everything') return restoreText(r);
  // "Kept" only where it is true: files another chat also wrote (confirmed with --yes) may have lost its edits.
  const others = r.otherChatFiles ?? [];
  const what =
    r.scope === 'file'
      ? 'Put the file back to its pre-turn content'
      : r.scope === 'change'
        ? 'Undid that change of the turn (the rest of the turn and later work kept)'
        : others.length > 0
          ? `Undid only this turn’s changes (later work kept, except another chat’s edits in ${others.length} ` +
            `file${others.length === 1 ? '' : 's'} you confirmed: ${others.slice(0, 10).join(', ')})`
          : 'Undid only this turn’s changes (later work kept)';
  const saved = r.preserved ? ` Your uncommitted changes were saved first (${r.preserved.slice(0, 10)}).` : '';
  return `${what} as ${r.restoreCommit?.slice(0, 10)}.${saved}`;
}
