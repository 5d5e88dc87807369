/**
 * The text a chat's agent reads at its next prompt after Undo, Redo or Restore changed files (chatNotes.ts,
 * docs/design/agent-notes.md). Pure. It names turns by their number in their chat and the time they began (never a
 * prompt: another chat's prompt is not this agent's to read), lists repository-relative paths (never contents) and
 * tells the agent to re-read them and leave an undone change alone unless the user asks.
 */
import type { ChatNote, NotedTurn } from './chatNotes';

/** Paths named in one text; the rest are counted ("and 3 more"). */
export const NOTE_PATHS_SHOWN = 20;

const pad = (n: number) => String(n).padStart(2, '0');

/** When a turn began, in the hook's local time: `14:02`, with the date when it was not today. */
export function noteTime(at: number, now: number): string {
  const d = new Date(at);
  const today = new Date(now);
  const time = `${pad(d.getHours())}:${pad(d.getMinutes())}`;
  const sameDay =
    d.getFullYear() === today.getFullYear() && d.getMonth() === today.getMonth() && d.getDate() === today.getDate();
  return sameDay ? time : `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${time}`;
}

function turnName(turn: NotedTurn, chatId: string, now: number): string {
  const when = noteTime(turn.at, now);
  return turn.chatId === chatId
    ? `your turn ${turn.seq} (the turn of ${when})`
    : `turn ${turn.seq} of another chat (${when})`;
}

/** What one operation did, as a clause after "the user …". */
export function noteAction(note: ChatNote, chatId: string, now: number): string {
  const turn = note.turn ? turnName(note.turn, chatId, now) : null;
  switch (note.kind) {
    case 'undo':
      if (!turn) return 'undid an agent turn';
      if (note.scope === 'file') return `undid ${turn} in one file`;
      if (note.scope === 'turn') return `undid only ${turn}, keeping the changes made after it`;
      return `took the files back to before ${turn}`;
    case 'redo':
      if (!turn) return 'redid a change that had been undone';
      return note.scope === 'file' ? `redid ${turn} in one file, after undoing it` : `redid ${turn}, after undoing it`;
    case 'restore':
      return turn
        ? `restored the files to the version ${turn} made`
        : `restored the files to an earlier version (commit ${note.target ?? 'unknown'})`;
  }
}

/** The paths of all notes, once each, in order, at most NOTE_PATHS_SHOWN named. */
export function notePaths(notes: readonly ChatNote[]): string {
  const named = [...new Set(notes.flatMap((n) => n.paths))];
  // A note keeps only some of its paths: the ones it did not keep are counted, not named.
  const unnamed = notes.reduce((sum, n) => sum + Math.max(0, n.pathCount - n.paths.length), 0);
  const shown = named.slice(0, NOTE_PATHS_SHOWN);
  const more = named.length - shown.length + unnamed;
  return `${shown.join(', ')}${more > 0 ? ` and ${more} more` : ''}`;
}

/**
 * The one text for a chat's pending notes (oldest first), or null when there are none: nothing is printed then.
 */
export function noteText(notes: readonly ChatNote[], chatId: string, now: number): string | null {
  if (notes.length === 0) return null;
  const undid = notes.some((n) => n.kind === 'undo');
  const what =
    notes.length === 1
      ? `the user ${noteAction(notes[0], chatId, now)}.`
      : `the user changed files with Version History ${notes.length} times: ` +
        `${notes.map((n, i) => `(${i + 1}) ${noteAction(n, chatId, now)}`).join('; ')}.`;
  return (
    `Agent Version History: since you last saw this repository, ${what} ` +
    `These files changed on disk: ${notePaths(notes)}. ` +
    `Re-read them before relying on what you remember of them` +
    (undid ? ', and do not re-apply the undone change unless the user asks for it.' : '.')
  );
}
