import {
  ConfirmationRequired,
  type ConfirmationWords,
  keptUndoResult,
  type RestoreOptions,
  type RestoreResult,
  type VersionHistory,
} from '../../core/versionHistory';
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
      throw error instanceof ConfirmationRequired ? inCliWords(error) : error;
    }
  });
}

const CONFIRM_WITH_FLAGS: ConfirmationWords = {
  choose: 'Run again with --only turn or --only everything; nothing was changed.',
  confirm: 'Run again with --yes to continue; nothing was changed.',
};

/** The same refusal in the CLI's words: how to confirm is a flag here. */
function inCliWords(error: ConfirmationRequired): ConfirmationRequired {
  const { refusal } = error;
  switch (refusal.kind) {
    case 'later-work':
    case 'user-commits':
    case 'other-chats':
      return new ConfirmationRequired(refusal, CONFIRM_WITH_FLAGS);
    case 'plan-changed':
      // Asked only of a caller that pinned a preview (the CLI pins none): the core's words.
      return error;
  }
}

/** restoreText, or what an Undo that keeps later work did (the extension's words too), with ids of 10. */
function undoText(r: RestoreResult): string {
  if (r.result !== 'restored' || !r.scope || r.scope === 'everything') return restoreText(r);
  return keptUndoResult({ ...r, scope: r.scope }, 10);
}
