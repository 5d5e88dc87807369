// The Version History's data, as the core's façade returns it (history/versionsView.ts builds it) and the view
// shows it: declared once as valibot schemas, every type inferred from its schema. The view's message protocol
// (src/vscode/historyView/protocol.ts) carries it and checks it with these schemas. Plain data: no vscode, no DOM.
import * as v from 'valibot';
import { TERMINAL_OUTCOMES } from '../outcomes';

/** A checkpoint's id (a UUID, as commandCheckpoints.ts makes them). */
export const CHECKPOINT_ID = v.pipe(v.string(), v.regex(/^[0-9a-f-]{36}$/, 'a checkpoint id'));

const KIND = v.picklist(['agent', 'interrupted', 'recovery', 'restore', 'user']);
export type VersionKindName = v.InferOutput<typeof KIND>;
const OUTCOME = v.picklist(TERMINAL_OUTCOMES);
const NULLABLE_STRING = v.nullable(v.string());
const BRANCH_STATE = v.picklist(['lost', 'on-remote', 'unknown']);

/** A version's turn, on the row of an `[Agent]` or `[Interrupted]` version only. */
const TURN_OF_ROW = v.object({
  id: v.string(),
  chatId: v.string(),
  chatTitle: NULLABLE_STRING,
  agent: NULLABLE_STRING,
  /** null while the turn's outcome is not recorded (a crash before it ended). */
  outcome: v.nullable(OUTCOME),
  /** Undo took this turn back (its row stays; the [Restore] version above it is the undo). */
  undone: v.boolean(),
  /** Undo can take this turn back now (not undone, has a base snapshot, on this branch). */
  canUndo: v.boolean(),
  /** 1-based number of the turn's conversation among the chats listed, so rows of one chat share a mark. */
  chatIndex: v.number(),
  /**
   * Continue Chat from Before This Turn applies: the turn's hook recorded where it sits in its agent's conversation
   * (only agents with a way to fork it record that: Claude Code, Codex; docs/design/conversation-rollback.md).
   */
  canContinueChat: v.boolean(),
  /** The chat's branch is gone from this repository (docs/product-contract.md §7); absent when it is here. */
  chatBranch: v.optional(BRANCH_STATE),
});
export type TurnOfRow = v.InferOutput<typeof TURN_OF_ROW>;

/**
 * One row of the list. The webview validates rows lazily as they scroll into view (parseVersionRow), so a
 * notification costs the same at 100 or 10,000 rows.
 */
export const VERSION_ROW = v.object({
  oid: v.string(),
  /** The commit subject without its kind prefix: for agent turns the prompt's summary. */
  label: v.string(),
  kind: KIND,
  /** Commit time, seconds since the epoch. */
  time: v.number(),
  filesChanged: v.number(),
  insertions: v.number(),
  deletions: v.number(),
  turn: v.nullable(TURN_OF_ROW),
  /** This version is the branch's HEAD. */
  isHead: v.boolean(),
});
export type VersionRow = v.InferOutput<typeof VERSION_ROW>;

/**
 * What a turn listed above the versions is (docs/product-contract.md §8): running; ended without a version with its
 * work still in the tree (`stopped` by the user, `errored`, or `unrecorded`: it completed but its version could not be
 * made); or `no-change`: it changed nothing (a question), listed quietly, never Undo's target.
 */
const OPEN_TURN_STATE = v.picklist(['running', 'stopped', 'errored', 'unrecorded', 'no-change']);
export type OpenTurnState = v.InferOutput<typeof OPEN_TURN_STATE>;

/** How many files a step lists by name; the counts cover them all. */
export const STEP_FILES_LISTED = 20;

/**
 * A checkpoint taken just before the agent ran a destructive command (issue 34), shown as a step under its turn:
 * what ran, and the files that were there before it and are changed or gone at the turn's end (a version's commit,
 * else the working tree now).
 */
const COMMAND_STEP = v.object({
  id: CHECKPOINT_ID,
  /** What was recognised, content-free (`git reset --hard`). */
  label: v.string(),
  /** The shell text the agent ran, shown like a prompt is. */
  command: v.string(),
  /** When it was taken, milliseconds since the epoch. */
  createdAt: v.number(),
  /** Ignored files (`.env`, logs) kept beside the store when it was taken. */
  savedFiles: v.number(),
  deleted: v.number(),
  modified: v.number(),
  /** The first STEP_FILES_LISTED of them, by path. */
  files: v.array(v.object({ path: v.string(), status: v.picklist(['modified', 'deleted']) })),
});
export type CommandStep = v.InferOutput<typeof COMMAND_STEP>;

/** A turn with a version (a row of the list) and the checkpoints taken during it, listed above the versions. */
const CHECKPOINTED_TURN = v.object({
  turnId: v.string(),
  /** Its version (the row's commit) and that version's label and time (seconds). */
  oid: v.string(),
  label: v.string(),
  time: v.number(),
  agent: NULLABLE_STRING,
  chatTitle: NULLABLE_STRING,
  steps: v.array(COMMAND_STEP),
});
export type CheckpointedTurn = v.InferOutput<typeof CHECKPOINTED_TURN>;

/** A turn that is not (yet) a version, listed above the versions: what Undo acts on first. */
const OPEN_TURN = v.object({
  id: v.string(),
  chatId: v.string(),
  chatTitle: NULLABLE_STRING,
  agent: NULLABLE_STRING,
  /** The first line of the prompt, as its version would be named. */
  label: v.string(),
  state: OPEN_TURN_STATE,
  /** When it began and when it ended (null while running), milliseconds since the epoch. */
  startedAt: v.number(),
  endedAt: v.nullable(v.number()),
  /** Files where the working tree differs from its base snapshot now; null when not counted. */
  filesChanged: v.nullable(v.number()),
  /** Its Undo is offered (and counted in the status bar's undo:N); false for a turn that changed nothing. */
  canUndo: v.boolean(),
  /** The checkpoints taken before its destructive commands, oldest first; absent when none. */
  steps: v.optional(v.array(COMMAND_STEP)),
});
export type OpenTurn = v.InferOutput<typeof OPEN_TURN>;

/** A warning entry: the conversation continues on `newBranch`; the code changes of `oldBranch` were not recovered. */
const BRANCH_WARNING = v.object({
  chatId: v.string(),
  chatTitle: NULLABLE_STRING,
  oldBranch: v.string(),
  newBranch: v.string(),
  baseBranch: v.string(),
  repository: v.string(),
  /** When it was stored, milliseconds since the epoch. */
  at: v.number(),
});
export type BranchWarning = v.InferOutput<typeof BRANCH_WARNING>;

/** A chat whose branch is not in this repository: lost (Continue on a New Branch), only on the remote, or unknown. */
const CHAT_BRANCH_NOTICE = v.object({
  chatId: v.string(),
  chatTitle: NULLABLE_STRING,
  branch: v.string(),
  state: BRANCH_STATE,
  message: v.string(),
  canContinue: v.boolean(),
});
export type ChatBranchNotice = v.InferOutput<typeof CHAT_BRANCH_NOTICE>;

const BRANCH_NOTICES = v.object({ warnings: v.array(BRANCH_WARNING), chats: v.array(CHAT_BRANCH_NOTICE) });
export type BranchNotices = v.InferOutput<typeof BRANCH_NOTICES>;

/**
 * The whole view model, with the schema `rows` is checked by: the host's model has typed rows; the webview
 * checks `rows` as an array only and each row when it first renders, so no pass over all rows.
 */
export function versionsViewOf<TRows extends v.GenericSchema<unknown, unknown[]>>(rows: TRows) {
  return v.variant('kind', [
    v.object({ kind: v.literal('loading') }),
    v.object({ kind: v.literal('no-repository') }),
    v.object({ kind: v.literal('blocked'), message: v.string() }),
    v.object({ kind: v.literal('empty'), branch: NULLABLE_STRING, notices: v.optional(BRANCH_NOTICES) }),
    /** `hasTurns` false: no agent turn recorded yet, so the view also says how to connect an agent. */
    v.object({
      kind: v.literal('versions'),
      branch: NULLABLE_STRING,
      rows,
      hasMore: v.boolean(),
      canRedo: v.boolean(),
      hasTurns: v.boolean(),
      notices: v.optional(BRANCH_NOTICES),
      /** The turns above the versions, newest first; absent when there are none. */
      openTurns: v.optional(v.array(OPEN_TURN)),
      /** Turns of the listed versions that took checkpoints before commands, newest first; absent when none. */
      checkpoints: v.optional(v.array(CHECKPOINTED_TURN)),
    }),
  ]);
}

/** VersionsView's schema, rows checked in full (what the host sends). */
export const VERSIONS_VIEW = versionsViewOf(v.array(VERSION_ROW));
/** The model the core computes (versionsView.ts) and the view's host sends. */
export type VersionsView = v.InferOutput<typeof VERSIONS_VIEW>;
