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
  /** The chat's branch is gone from this repository (SPEC §7); absent when it is here. */
  chatBranch?: 'lost' | 'on-remote' | 'unknown';
}

/** A warning entry: the conversation continues on `newBranch`; the code changes of `oldBranch` were not recovered. */
export interface BranchWarning {
  chatId: string;
  chatTitle: string | null;
  oldBranch: string;
  newBranch: string;
  baseBranch: string;
  repository: string;
  /** When it was stored, milliseconds since the epoch. */
  at: number;
}

/** A chat whose branch is not in this repository: lost (with Continue on a New Branch), only on the remote, or unknown (Try again). */
export interface ChatBranchNotice {
  chatId: string;
  chatTitle: string | null;
  branch: string;
  state: 'lost' | 'on-remote' | 'unknown';
  message: string;
  canContinue: boolean;
}

export interface BranchNotices {
  warnings: BranchWarning[];
  chats: ChatBranchNotice[];
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
  | { kind: 'empty'; branch: string | null; notices?: BranchNotices }
  /** `hasTurns` false: no agent turn recorded yet, so the view also says how to connect an agent. */
  | {
      kind: 'versions';
      branch: string | null;
      rows: VersionRow[];
      hasMore: boolean;
      canRedo: boolean;
      hasTurns: boolean;
      notices?: BranchNotices;
    };
