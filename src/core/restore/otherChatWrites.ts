import type { RepoContext } from '../context';
import { type CommitRange, commitsAfterIn, commitsSince, type LaterCommit } from '../git/reverseMerge';
import { changedPaths } from '../git/history';
import { ZERO_OID } from '../git/refUpdate';
import type { UndoScope } from '../store/schema';
import { kindOfSubject } from '../domain/promptSummary';
import { chatWritesSince, readTurnWrites } from '../turns/toolWrites';
import { openTurns, type TurnRow } from '../turns/turnRecords';
import { turnsByIds } from './historyCounts';
import { ConfirmationRequired } from './refusals';
import type { RestoreOptions } from './restoreRequest';

/**
 * Undo Only This Turn / Undo This File with two chats in one working tree (docs/design/two-chats.md): the files the
 * Undo would change that another chat's turn wrote after this turn, or may hold its edits (it ran shell commands
 * while this turn ran). Such an Undo is not guessed: it names the chats and files and asks.
 */
export interface OtherChatWrites {
  /** The other chats, as the question names them: `codex chat 01a232c3`. */
  chats: string[];
  /** The files, sorted. */
  files: string[];
}

/** At most this many later commits are looked at (older work is beyond what an Undo of a recent turn meets). */
const MAX_LATER = 500;

/**
 * What another chat wrote in the files an Undo of `turn` (one `file`, or all it changed) changes; null when none.
 * `listed`: the commits since the turn began, as the plan listed them (revertPlan.ts laterCommits), so the commits
 * after its version need no second `git log`. Read-only (git log and diff-tree, each only when needed; the
 * tool-write records of the turns).
 */
export async function otherChatWritesIn(
  ctx: RepoContext,
  turn: TurnRow,
  scope: Exclude<UndoScope, 'everything'>,
  file: string | null,
  head: string,
  listed: CommitRange | null = null,
): Promise<OtherChatWrites | null> {
  const version = turn.version_commit;
  if (!version) return null;
  // The files the Undo changes, read from git only once some other chat's files are to be compared with them.
  let touched: Promise<ReadonlySet<string>> | null = null;
  const touchedPaths = () =>
    (touched ??= Promise.resolve(
      scope === 'file' && file !== null ? new Set([file]) : changedPaths(ctx.repo, version).then((p) => new Set(p)),
    ));
  const files = new Set<string>();
  const chats = new Map<string, string>();
  const hit = async (chatId: string, agent: string | null, paths: Iterable<string>) => {
    const candidates = [...paths];
    if (candidates.length === 0) return;
    const changed = await touchedPaths();
    let any = false;
    for (const p of candidates) {
      if (!changed.has(p)) continue;
      files.add(p);
      any = true;
    }
    if (any) chats.set(chatId, chatLabel(chatId, agent));
  };
  const { stateDir } = ctx.repo;
  // 1. The turn's own version may hold another chat's shell edits, or files both reported writing.
  const overlap = readTurnWrites(stateDir, turn.id)?.overlap;
  if (overlap) for (const c of overlap.chats) await hit(c.chatId, c.agent, overlap.paths);
  // 2. Turns of other chats whose versions landed after this one, still in effect.
  const later = (head === version ? [] : await commitsAfter(ctx, turn, version, head, listed)).slice(0, MAX_LATER);
  const laterIds = later.filter((c) => kindOfSubject(c.subject) === 'agent' && c.turn && c.turn !== turn.id);
  const laterTurns = (
    await turnsByIds(
      ctx,
      laterIds.map((c) => c.turn),
    )
  ).filter((t) => t.undone_by === null && t.chat_id !== turn.chat_id);
  for (const other of laterTurns) {
    const record = readTurnWrites(stateDir, other.id);
    if (!record) continue;
    await hit(other.chat_id, other.agent, record.paths);
    // Shell edits: whatever its version changed may be its own.
    if (record.shell && other.version_commit)
      await hit(other.chat_id, other.agent, await changedPaths(ctx.repo, other.version_commit));
  }
  // 3. Other chats' turns still running: what they reported so far.
  const running = await ctx.store.read((r) => openTurns(r).filter((t) => t.chat_id !== turn.chat_id));
  for (const other of running)
    await hit(other.chat_id, other.agent, chatWritesSince(stateDir, other.chat_id, other.created_at).paths);
  if (files.size === 0) return null;
  return { chats: [...new Set(chats.values())].sort(), files: [...files].sort() };
}

/**
 * The commits on HEAD's history after `version`: from the plan's list when it can tell them (commitsAfterIn), else
 * one `git log`. `listed` ran from the HEAD the turn began on, or (none recorded) from the version's own parents.
 */
async function commitsAfter(
  ctx: RepoContext,
  turn: TurnRow,
  version: string,
  head: string,
  listed: CommitRange | null,
): Promise<LaterCommit[]> {
  const since = turn.base_head === null || turn.base_head === ZERO_OID ? null : turn.base_head;
  const known = listed ? commitsAfterIn(listed, version, since) : null;
  return known ?? (await commitsSince(ctx.repo, version, head)).commits;
}

/**
 * Refuses (nothing changed) an Undo Only This Turn / Undo This File that would change files another chat wrote,
 * unless the user confirmed it (`confirmOtherChats`). Returns what was confirmed, for the result's wording.
 */
export async function assertOtherChatsConfirmed(
  ctx: RepoContext,
  plan: { turn: TurnRow | null; scope: UndoScope; scopePath: string | null; head: string; listed: CommitRange | null },
  options: RestoreOptions,
): Promise<OtherChatWrites | null> {
  if (!plan.turn || plan.scope === 'everything') return null;
  const found = await otherChatWritesIn(ctx, plan.turn, plan.scope, plan.scopePath, plan.head, plan.listed);
  if (!found || options.confirmOtherChats) return found;
  throw new ConfirmationRequired({ kind: 'other-chats', chats: found.chats, files: found.files });
}

/** `codex chat 01a232c3`: the agent and the start of the chat's id (no prompt, no title). */
function chatLabel(chatId: string, agent: string | null): string {
  const id = chatId.includes(':') ? chatId.slice(chatId.indexOf(':') + 1) : chatId;
  return `${agent ?? 'agent'} chat ${id.slice(0, 8)}`;
}
