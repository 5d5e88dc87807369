/**
 * The facts a hook event needs from the store, kept in a small file beside it so the CLI's hook fast path
 * (src/cli/hooks/fastHook.ts) can decide without loading sql.js (docs/design.md, "Fast hook events"). Written by
 * a full process after a hook event and by the fast path after its own append; keyed to the exact journal state
 * it describes, and trusted only while the journal on disk is still exactly that state: any other write, a
 * compaction or a cut torn tail makes it stale, and the event takes the full path, which writes it again.
 * Written by rename without fsync: a lost or torn file only means one event takes the full path.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { RepoContext } from '../context';
import { pendingNoteCount } from '../chats/chatNotes';
import { pendingContinuations } from '../chats/chatRecords';
import { readRecovery } from '../operations/recoveryLatch';
import { inFlightOperation } from '../operations/operationRecords';
import type { StoreReader } from '../store/durableStore';
import type { JournalState } from '../store/journalAppend';
import { SCHEMA_VERSION } from '../store/schema';
import { agentSubject } from '../domain/promptSummary';
import { getChat, maxTurnSeq, openTurns, pendingTurns } from './turnRecords';

export const HOOK_FACTS_FILE = 'hook-facts.json';
const FORMAT = 2;
/** The most recently active chats kept (besides the event's own): several agents at once stay on the fast path. */
const RECENT_CHATS = 16;

export interface HookRunningTurn {
  id: string;
  seq: number;
  /** When it began (its row's created_at): its end folds its agent's reports from then on (toolWrites.ts). */
  createdAt: number;
  /** Its version's subject, agentSubject(prompt) (promptSummary.ts). */
  subject: string;
  baseHead: string | null;
  baseCommit: string | null;
  baseTree: string | null;
}

export interface HookChatFacts {
  branch: string | null;
  maxSeq: number;
  /** The chat's turns not yet ended, oldest first (the order the full path ends them in). */
  running: HookRunningTurn[];
  /** Notes waiting for the chat's next prompt (chats/chatNotes.ts): only the full path prints them. */
  notes: number;
}

export interface HookFacts {
  format: typeof FORMAT;
  schemaVersion: number;
  /** The repository as git resolved it (`rev-parse --show-toplevel --absolute-git-dir`). */
  root: string;
  gitDir: string;
  journal: JournalState;
  recoveryRequired: boolean;
  restoreInFlight: boolean;
  /**
   * Turns completed whose version was never settled, and chat continuations left half done: the full open settles
   * them.
   */
  unsettled: number;
  /** The turns not yet ended, in every chat kept here or not: another chat's running turn shapes a version. */
  openTurns: number;
  /**
   * Checkpoints whose turn the history archive moved out of the hot store: while there are any, the full path takes
   * the next checkpoint, which prunes them (commandCheckpoints.ts pruneCheckpointsUnderLease; the fast path has no
   * store to prune with).
   */
  checkpointsToPrune: number;
  chats: Record<string, HookChatFacts>;
  /**
   * The tree of a commit the fast path last saw at HEAD (a version it made, a HEAD whose object it read): the next
   * event on that HEAD needs no object read. A commit's tree never changes; written by the fast path only.
   */
  commitTree?: { commit: string; tree: string };
}

/** Reads the facts from the store (the caller's state). `chatIds` are kept besides the most recently active chats. */
export function collectHookFacts(
  r: StoreReader,
  chatIds: readonly string[],
): Omit<HookFacts, 'format' | 'schemaVersion' | 'root' | 'gitDir' | 'journal'> {
  const recent = r
    .all<{ id: string }>('SELECT id FROM chats ORDER BY updated_at DESC LIMIT ?', [RECENT_CHATS])
    .map((c) => c.id);
  const running = openTurns(r);
  // Null prototype: a chat id like `constructor` is a key like any other.
  const chats: Record<string, HookChatFacts> = Object.create(null) as Record<string, HookChatFacts>;
  for (const id of new Set([...chatIds, ...recent])) {
    const chat = getChat(r, id);
    if (!chat) continue;
    chats[id] = {
      branch: chat.branch,
      maxSeq: maxTurnSeq(r, id),
      running: running
        .filter((t) => t.chat_id === id)
        .map((t) => ({
          id: t.id,
          seq: t.seq,
          createdAt: t.created_at,
          subject: agentSubject(t.prompt),
          baseHead: t.base_head,
          baseCommit: t.base_commit,
          baseTree: t.base_tree,
        })),
      notes: pendingNoteCount(r, id),
    };
  }
  return {
    recoveryRequired: readRecovery(r) !== null,
    restoreInFlight: inFlightOperation(r) !== undefined,
    unsettled: pendingTurns(r).length + pendingContinuations(r).length,
    openTurns: running.length,
    checkpointsToPrune:
      r.get<{ n: number }>('SELECT count(*) AS n FROM command_checkpoints WHERE turn_id NOT IN (SELECT id FROM turns)')
        ?.n ?? 0,
    chats,
  };
}

/**
 * Writes the facts of the store's current state (after a hook event of the full path). Never throws: a missing file
 * only costs speed.
 */
export async function recordHookFacts(ctx: RepoContext, chatIds: readonly string[]): Promise<void> {
  try {
    const { result, journal } = await ctx.store.readWithJournalState((r) => collectHookFacts(r, chatIds));
    writeHookFacts(ctx.repo.stateDir, {
      format: FORMAT,
      schemaVersion: SCHEMA_VERSION,
      root: ctx.repo.root,
      gitDir: ctx.repo.gitDir,
      journal,
      ...result,
    });
  } catch {
    removeHookFacts(ctx.repo.stateDir);
  }
}

/** The facts of one chat, when they were kept: own keys only (`toString` or `__proto__` name no chat of any file). */
export function chatFactsOf(facts: HookFacts, chatId: string): HookChatFacts | undefined {
  return Object.hasOwn(facts.chats, chatId) ? facts.chats[chatId] : undefined;
}

/** Writes the facts file by rename (no fsync: a lost one costs one event the full path). Never throws. */
export function writeHookFacts(stateDir: string, facts: HookFacts): void {
  const file = path.join(stateDir, HOOK_FACTS_FILE);
  const tmp = `${file}.tmp-${process.pid}`;
  try {
    fs.writeFileSync(tmp, JSON.stringify(facts), { mode: 0o600 });
    fs.renameSync(tmp, file);
  } catch {
    fs.rmSync(tmp, { force: true });
    removeHookFacts(stateDir);
  }
}

function removeHookFacts(stateDir: string): void {
  try {
    fs.rmSync(path.join(stateDir, HOOK_FACTS_FILE), { force: true });
  } catch {
    // A stale file is refused by its journal key anyway.
  }
}

/** The facts file of `stateDir` when it is well formed and of this schema; null otherwise (the full path decides). */
export function readHookFacts(stateDir: string): HookFacts | null {
  let value: unknown;
  try {
    value = JSON.parse(fs.readFileSync(path.join(stateDir, HOOK_FACTS_FILE), 'utf8'));
  } catch {
    return null;
  }
  return isHookFacts(value) ? value : null;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isCount = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 0;
const isOid = (v: unknown): boolean =>
  v === null || (typeof v === 'string' && /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/.test(v));

function isRunningTurn(v: unknown): v is HookRunningTurn {
  return (
    isObject(v) &&
    typeof v.id === 'string' &&
    isCount(v.seq) &&
    isCount(v.createdAt) &&
    typeof v.subject === 'string' &&
    isOid(v.baseHead) &&
    isOid(v.baseCommit) &&
    isOid(v.baseTree)
  );
}

function isHookFacts(v: unknown): v is HookFacts {
  if (!isObject(v) || v.format !== FORMAT || v.schemaVersion !== SCHEMA_VERSION) return false;
  if (
    typeof v.root !== 'string' ||
    typeof v.gitDir !== 'string' ||
    typeof v.recoveryRequired !== 'boolean' ||
    typeof v.restoreInFlight !== 'boolean' ||
    !isCount(v.unsettled) ||
    !isCount(v.openTurns) ||
    !isCount(v.checkpointsToPrune)
  )
    return false;
  const j = v.journal;
  if (
    !isObject(j) ||
    typeof j.lineage !== 'string' ||
    !isCount(j.baseSeq) ||
    !isCount(j.lastSeq) ||
    typeof j.key !== 'string'
  )
    return false;
  const t = v.commitTree;
  if (t !== undefined && !(isObject(t) && isOid(t.commit) && isOid(t.tree) && t.commit !== null && t.tree !== null))
    return false;
  if (!isObject(v.chats)) return false;
  return Object.values(v.chats).every(
    (c) =>
      isObject(c) &&
      (c.branch === null || typeof c.branch === 'string') &&
      isCount(c.maxSeq) &&
      isCount(c.notes) &&
      Array.isArray(c.running) &&
      c.running.every(isRunningTurn),
  );
}
