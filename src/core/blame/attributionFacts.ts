import type { TerminalOutcome } from '../outcomes';
import type { DurableStore, StoreReader } from '../store/durableStore';
import type { OperationKind, UndoScope } from '../store/schema';
import { agentSubject } from '../domain/promptSummary';

/**
 * What attribution needs to know from our records, behind one small interface so it can be tested (and fed from
 * commit trailers alone) without a store. Times are milliseconds since the epoch, as the store keeps them.
 */
export interface TurnFact {
  id: string;
  chatId: string;
  chatTitle: string | null;
  agent: string | null;
  /** The prompt's first line as the `[Agent]` subject shows it; never the whole prompt. */
  summary: string;
  startedAt: number;
  endedAt: number | null;
  branch: string | null;
  /** HEAD when the turn began (null: an unborn branch). */
  baseHead: string | null;
  /** The exact pre-turn state: HEAD itself for a clean tree, else a snapshot commit whose parent is baseHead. */
  baseCommit: string | null;
  versionCommit: string | null;
  outcome: TerminalOutcome | null;
  /** Not ended yet (accepted or running). */
  running: boolean;
  undone: boolean;
}

/** One Undo/Redo/Restore as far as history is concerned: the commits it made and what they were made from. */
export interface OperationFact {
  id: string;
  kind: OperationKind;
  scope: UndoScope;
  turnId: string | null;
  sourceHead: string;
  /** 'everything': the tree the restore commit holds. 'turn' / 'file': the undone turn's base snapshot. */
  target: string;
  /** The `[Interrupted]` commit saved first, if any. */
  preserveCommit: string | null;
  /** The `[Restore]` / `[Revert]` commit, once written. */
  restoreCommit: string | null;
}

export interface AttributionFacts {
  /** Oldest first. */
  turns: readonly TurnFact[];
  operations: readonly OperationFact[];
}

export interface AttributionFactsSource {
  read(): Promise<AttributionFacts>;
}

interface TurnFactRow {
  id: string;
  chat_id: string;
  prompt: string;
  agent: string | null;
  chat_agent: string | null;
  title: string | null;
  recovery: string;
  terminal_outcome: TerminalOutcome | null;
  branch: string | null;
  base_head: string | null;
  base_commit: string | null;
  version_commit: string | null;
  undone_by: string | null;
  created_at: number;
  ended_at: number | null;
}

interface OperationFactRow {
  id: string;
  kind: OperationKind;
  scope: UndoScope | null;
  turn_id: string | null;
  source_head: string;
  target_commit: string;
  preserve_commit: string | null;
  restore_commit: string | null;
}

/** The turns and the commit-making operations in one store read (archived turns included). Read-only. */
export function readAttributionFacts(r: StoreReader): AttributionFacts {
  const turns = r
    .all<TurnFactRow>(
      `SELECT t.id, t.chat_id, t.prompt, t.agent, c.agent AS chat_agent, c.title, t.recovery, t.terminal_outcome,
              t.branch, t.base_head, t.base_commit, t.version_commit, t.undone_by, t.created_at, t.ended_at
         FROM turns t LEFT JOIN chats c ON c.id = t.chat_id ORDER BY t.created_at, t.seq`,
    )
    .map((t): TurnFact => ({
      id: t.id,
      chatId: t.chat_id,
      chatTitle: t.title,
      agent: t.agent ?? t.chat_agent,
      summary: agentSubject(t.prompt).slice('[Agent] '.length),
      startedAt: t.created_at,
      endedAt: t.ended_at,
      branch: t.branch,
      baseHead: t.base_head,
      baseCommit: t.base_commit,
      versionCommit: t.version_commit,
      outcome: t.terminal_outcome,
      running: t.recovery !== 'terminal',
      undone: t.undone_by !== null,
    }));
  const operations = r
    .all<OperationFactRow>(
      `SELECT id, kind, scope, turn_id, source_head, target_commit, preserve_commit, restore_commit FROM operations
        WHERE restore_commit IS NOT NULL OR preserve_commit IS NOT NULL ORDER BY started_at`,
    )
    .map((o): OperationFact => ({
      id: o.id,
      kind: o.kind,
      scope: o.scope ?? 'everything',
      turnId: o.turn_id,
      sourceHead: o.source_head,
      target: o.target_commit,
      preserveCommit: o.preserve_commit,
      restoreCommit: o.restore_commit,
    }));
  return { turns, operations };
}

/** The durable store as a source of facts (one read per call; the history archive is loaded on first use). */
export function storeFacts(store: DurableStore): AttributionFactsSource {
  return { read: () => store.read(readAttributionFacts, { history: true }) };
}

/** Fixed facts (tests, or facts rebuilt from commit trailers). */
export function fixedFacts(facts: AttributionFacts): AttributionFactsSource {
  return { read: () => Promise.resolve(facts) };
}
