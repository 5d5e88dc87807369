// What a row offers: the buttons on a hovered or selected row and its context menu list the same actions.
import type { VersionRow, WebviewRequestBody } from '../protocol';

export interface RowAction {
  label: string;
  /** The accessible name (and the button's tooltip). */
  name: string;
  body: WebviewRequestBody;
}

export function actionsOf(row: VersionRow): RowAction[] {
  const actions: RowAction[] = [
    { label: 'Show Changes', name: `Show changes of ${row.label}`, body: { type: 'showChanges', oid: row.oid } },
  ];
  if (row.turn?.canUndo)
    actions.push({
      label: 'Undo',
      name: `Undo agent turn: ${row.label}`,
      body: { type: 'undo', turnId: row.turn.id },
    });
  if (row.turn?.chatBranch === 'lost')
    actions.push({
      label: 'Continue on a New Branch',
      name: `Continue the conversation of ${row.label} on a new branch`,
      body: { type: 'continueOnNewBranch', chatId: row.turn.chatId },
    });
  if (!row.isHead)
    actions.push({
      label: 'Restore to This Version',
      name: `Restore to this version: ${row.label}`,
      body: { type: 'restore', oid: row.oid },
    });
  return actions;
}
