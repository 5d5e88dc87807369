// What a row offers: the icon buttons on a hovered or selected row and its context menu list the same actions.
import type { VersionRow, WebviewRequestBody } from '../protocol';

export interface RowAction {
  /** The menu item's text and the icon button's tooltip. */
  label: string;
  /** The accessible name of the button and the menu item. */
  name: string;
  /** The codicon the row's button shows (`codicon-<icon>`), as VS Code's own list rows show their actions. */
  icon: string;
  body: WebviewRequestBody;
  /** Only in the row's context menu, not as an icon button (a secondary action keeps the title its width). */
  menuOnly?: boolean;
}

export function actionsOf(row: VersionRow): RowAction[] {
  const actions: RowAction[] = [
    {
      label: 'Show Changes',
      name: `Show changes of ${row.label}`,
      icon: 'diff-multiple',
      body: { type: 'showChanges', oid: row.oid },
    },
  ];
  if (row.turn?.canUndo)
    actions.push({
      label: 'Undo',
      name: `Undo agent turn: ${row.label}`,
      icon: 'discard',
      body: { type: 'undo', turnId: row.turn.id },
    });
  if (row.turn?.canUndo && row.turn.canContinueChat)
    actions.push({
      label: 'Undo Turn and Its Conversation',
      name: `Undo agent turn and its conversation: ${row.label}`,
      icon: 'discard',
      body: { type: 'undoWithConversation', turnId: row.turn.id },
      menuOnly: true,
    });
  if (row.turn?.canContinueChat)
    actions.push({
      label: 'Continue Chat from Before This Turn',
      name: `Continue the chat from before this turn: ${row.label}`,
      icon: 'comment-discussion',
      body: { type: 'continueChat', turnId: row.turn.id },
      // After an Undo it is the row's next step: a button; otherwise in the menu only.
      menuOnly: !row.turn.undone,
    });
  if (row.kind === 'agent' && row.turn)
    actions.push({
      label: 'Lines It Still Owns',
      name: `Show the lines of the current files that ${row.label} still owns`,
      icon: 'list-selection',
      body: { type: 'showOwnedLines', turnId: row.turn.id },
      menuOnly: true,
    });
  if (row.turn?.chatBranch === 'lost')
    actions.push({
      label: 'Continue on a New Branch',
      name: `Continue the conversation of ${row.label} on a new branch`,
      icon: 'git-branch',
      body: { type: 'continueOnNewBranch', chatId: row.turn.chatId },
    });
  if (!row.isHead)
    actions.push({
      label: 'Restore to This Version',
      name: `Restore to this version: ${row.label}`,
      icon: 'history',
      body: { type: 'restore', oid: row.oid },
    });
  return actions;
}
