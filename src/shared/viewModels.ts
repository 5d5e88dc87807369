// View models of the Version History view: computed in the extension host (src/core/turns/versionRows.ts),
// rendered by the webview. Plain data only (they cross postMessage).
/** The same three outcomes as src/core/outcomes.ts (kept here so the webview imports nothing from the core). */
export type TerminalOutcome = 'completed' | 'cancelled' | 'errored';

export type VersionKindName = 'agent' | 'interrupted' | 'recovery' | 'restore' | 'user';

export interface TurnOfRow {
  id: string;
  chatId: string;
  chatTitle: string | null;
  agent: string | null;
  /** null while the turn's outcome is not recorded (a crash before it ended). */
  outcome: TerminalOutcome | null;
  /** Undo took this turn back (its row stays; the [Restore] version above it is the undo). */
  undone: boolean;
  /** Undo can take this turn back now (not undone, has a base snapshot, on this branch). */
  canUndo: boolean;
  /** 1-based number of the turn's conversation among the chats listed, so rows of one chat share a mark. */
  chatIndex: number;
}

export interface VersionRow {
  oid: string;
  /** The commit subject without its kind prefix: for agent turns the prompt's summary. */
  label: string;
  kind: VersionKindName;
  /** Commit time, seconds since the epoch. */
  time: number;
  filesChanged: number;
  insertions: number;
  deletions: number;
  turn: TurnOfRow | null;
  /** This version is the branch's HEAD. */
  isHead: boolean;
}

export type VersionsView =
  | { kind: 'loading' }
  | { kind: 'no-repository' }
  | { kind: 'blocked'; message: string }
  | { kind: 'empty'; branch: string | null }
  /** `hasTurns` false: no agent turn recorded yet, so the view also says how to connect an agent. */
  | { kind: 'versions'; branch: string | null; rows: VersionRow[]; hasMore: boolean; canRedo: boolean; hasTurns: boolean };
