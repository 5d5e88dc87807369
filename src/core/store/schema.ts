import { TERMINAL_OUTCOMES, TURN_RECOVERY_STATES } from '../outcomes';
import { RESTORE_PHASES, type RestorePhase } from '../domain/restorePhases';

const sqlList = (values: readonly string[]) => values.map((v) => `'${v}'`).join(', ');

/** Restore phases in order (docs/design/restore-saga.md): derived from the saga's phase registry, their one source. */
export { RESTORE_PHASES, type RestorePhase };

export const OPERATION_KINDS = ['undo', 'redo', 'restore'] as const;
export type OperationKind = (typeof OPERATION_KINDS)[number];

/** What an Undo takes back: everything since the turn (its base), only the turn's own changes, or one file of it. */
export const UNDO_SCOPES = ['everything', 'turn', 'file'] as const;
export type UndoScope = (typeof UNDO_SCOPES)[number];

export const OPERATION_STATUSES = ['in-flight', 'completed', 'failed', 'rolled-back', 'recovery-required'] as const;
export type OperationStatus = (typeof OPERATION_STATUSES)[number];

export const PRESERVATION_REASONS = ['active-cancel', 'durable-cancelled-turn', 'none'] as const;
export type PreservationReason = (typeof PRESERVATION_REASONS)[number];

export const CHAT_EVENT_KINDS = ['continued-on-new-branch'] as const;
export type ChatEventKind = (typeof CHAT_EVENT_KINDS)[number];
export const CHAT_EVENT_STATUSES = ['pending', 'done'] as const;
export type ChatEventStatus = (typeof CHAT_EVENT_STATUSES)[number];

/**
 * Ordered migrations. Migration N brings user_version from N-1 to N. Never edit a shipped migration;
 * append a new one. Each is a list of statements run in one transaction.
 */
export const MIGRATIONS: readonly (readonly string[])[] = [
  [
    `CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)`,
    `CREATE TABLE chats (
      id TEXT PRIMARY KEY,
      title TEXT,
      agent TEXT,
      branch TEXT,
      base_branch TEXT,
      resume_identity TEXT,
      created_at INTEGER NOT NULL,
      updated_at INTEGER NOT NULL
    )`,
    `CREATE TABLE turns (
      id TEXT PRIMARY KEY,
      chat_id TEXT NOT NULL REFERENCES chats(id),
      seq INTEGER NOT NULL,
      prompt TEXT NOT NULL,
      agent TEXT,
      recovery TEXT NOT NULL CHECK (recovery IN (${sqlList(TURN_RECOVERY_STATES)})),
      terminal_outcome TEXT CHECK (terminal_outcome IS NULL OR terminal_outcome IN (${sqlList(TERMINAL_OUTCOMES)})),
      branch TEXT,
      base_head TEXT,
      base_commit TEXT,
      base_tree TEXT,
      version_commit TEXT,
      no_version_reason TEXT,
      undone_by TEXT,
      created_at INTEGER NOT NULL,
      ended_at INTEGER,
      UNIQUE (chat_id, seq)
    )`,
    `CREATE INDEX turns_open ON turns (recovery) WHERE recovery <> 'terminal'`,
    `CREATE INDEX turns_branch ON turns (branch, created_at)`,
    `CREATE TABLE operations (
      id TEXT PRIMARY KEY,
      kind TEXT NOT NULL CHECK (kind IN (${sqlList(OPERATION_KINDS)})),
      phase TEXT NOT NULL CHECK (phase IN (${sqlList(RESTORE_PHASES)})),
      status TEXT NOT NULL CHECK (status IN (${sqlList(OPERATION_STATUSES)})),
      turn_id TEXT,
      source_branch TEXT,
      source_head TEXT,
      target_commit TEXT,
      preservation TEXT NOT NULL DEFAULT 'none' CHECK (preservation IN (${sqlList(PRESERVATION_REASONS)})),
      preserve_commit TEXT,
      restore_commit TEXT,
      attempts INTEGER NOT NULL DEFAULT 0,
      last_error TEXT,
      started_at INTEGER NOT NULL,
      updated_at INTEGER NOT NULL
    )`,
    `CREATE UNIQUE INDEX operations_one_in_flight ON operations (status) WHERE status = 'in-flight'`,
    `CREATE TABLE recovery (
      id INTEGER PRIMARY KEY CHECK (id = 1),
      generation INTEGER NOT NULL,
      operation_id TEXT,
      reason TEXT NOT NULL,
      last_phase TEXT,
      created_at INTEGER NOT NULL
    )`,
    `CREATE TABLE redo_entries (
      op_id TEXT PRIMARY KEY,
      position INTEGER NOT NULL,
      branch TEXT NOT NULL,
      result_commit TEXT NOT NULL,
      redo_target TEXT NOT NULL,
      turn_id TEXT
    )`,
  ],
  // Issue 15: paths the user chose to keep in versions although they look like secrets ("Include in Versions").
  [`CREATE TABLE secret_inclusions (path TEXT PRIMARY KEY, decided_at INTEGER NOT NULL)`],
  // Issue 10: the remote a chat's branch is checked against, and the chat's branch-loss continuations. A row is
  // written 'pending' before its new branch is created and becomes 'done' (the warning entry) together with the
  // chat's update; one row per chat and lost branch, so retries and crashes never make a second warning.
  [
    `ALTER TABLE chats ADD COLUMN remote TEXT`,
    `CREATE TABLE chat_events (
      id TEXT PRIMARY KEY,
      chat_id TEXT NOT NULL REFERENCES chats(id),
      kind TEXT NOT NULL CHECK (kind IN (${sqlList(CHAT_EVENT_KINDS)})),
      status TEXT NOT NULL CHECK (status IN (${sqlList(CHAT_EVENT_STATUSES)})),
      old_branch TEXT NOT NULL,
      new_branch TEXT NOT NULL,
      base_branch TEXT NOT NULL,
      base_commit TEXT NOT NULL,
      created_at INTEGER NOT NULL,
      updated_at INTEGER NOT NULL,
      UNIQUE (chat_id, kind, old_branch)
    )`,
  ],
  // Issue 12 (migration 4): Undo Only This Turn / Undo This File run through the same saga; the scope says what the
  // commit holds.
  [
    `ALTER TABLE operations ADD COLUMN scope TEXT NOT NULL DEFAULT 'everything' ` +
      `CHECK (scope IN (${sqlList(UNDO_SCOPES)}))`,
    `ALTER TABLE operations ADD COLUMN scope_path TEXT`,
  ],
  // Issue 26: Undo This Change is scope 'file' narrowed to one hunk of the turn: scope_path is the file in the turn's
  // commit and scope_change the change (JSON of blame/undoChange.ts's TurnChange: commit, line, pre, prePath), so a
  // crash or a saved working tree computes the same reverse again. NULL for every other Undo.
  [`ALTER TABLE operations ADD COLUMN scope_change TEXT`],
  // Issue 23 (migration 6): a note each chat's agent hears at its next prompt after an Undo, Redo or
  // Restore changed files (chats/chatNotes.ts). One row per chat and operation; `note` is JSON (never a prompt or
  // file contents); `handed_to` names the turn whose hook is printing it, and the row goes once that hook printed it.
  [
    `CREATE TABLE chat_notes (
      chat_id TEXT NOT NULL,
      op_id TEXT NOT NULL,
      created_at INTEGER NOT NULL,
      note TEXT NOT NULL,
      handed_to TEXT,
      PRIMARY KEY (chat_id, op_id)
    )`,
  ],
  // Issue 34 (migration 7): a snapshot of the working tree taken just before a running turn's agent ran a command
  // that destroys working-tree content (`git reset --hard`, `git clean`, `rm -rf`, …). `command` is the shell text
  // the agent wrote (kept like a prompt: never logged); `commit_oid` is the private snapshot commit
  // (refs/agent-versions/checkpoints/<id>); `saved_files` counts the ignored files kept beside the store
  // (turns/commandCheckpoints.ts).
  [
    `CREATE TABLE command_checkpoints (
      id TEXT PRIMARY KEY,
      turn_id TEXT NOT NULL,
      chat_id TEXT NOT NULL,
      command TEXT NOT NULL,
      label TEXT NOT NULL,
      commit_oid TEXT NOT NULL,
      saved_files INTEGER NOT NULL DEFAULT 0,
      created_at INTEGER NOT NULL
    )`,
    `CREATE INDEX command_checkpoints_turn ON command_checkpoints (turn_id, created_at)`,
  ],
  // Issue 32 (migration 8): where a turn sits in its agent's own conversation, so the chat can be continued from
  // before it (chats/turnAnchors.ts). Ids only, as the agent's hook sent them: `chat_ref` the agent's session,
  // `turn_ref` the agent's id of this turn's prompt, `transcript` the session file the agent named (Claude Code).
  // No row: the anchor is unknown (never guessed).
  [
    `CREATE TABLE turn_anchors (
      turn_id TEXT PRIMARY KEY,
      agent TEXT NOT NULL,
      chat_ref TEXT NOT NULL,
      turn_ref TEXT NOT NULL,
      transcript TEXT,
      created_at INTEGER NOT NULL
    )`,
  ],
];

export const SCHEMA_VERSION = MIGRATIONS.length;
