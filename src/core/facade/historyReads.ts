import { type ConversationTurn, conversationTurnsOf, type StoredTurnAnchor, turnAnchorOf } from '../chats/turnAnchors';
import type { RepoContext } from '../context';
import { AvhError } from '../errors';
import { readSymbolicHead } from '../git/healthProbe';
import { FULL_OID } from '../domain/objectId';
import { type ChangedFile, changedFilesOf, readBlobAt } from '../git/versionLog';
import type { StoreReader } from '../store/readOnlyGuard';
import { getTurn } from '../turns/turnRecords';
import { validateTurnId } from '../turns/validation';
import { workingChanges } from '../turns/workingChanges';

/** A turn and where it sits in its agent's own conversation (null anchor when its hook named none). */
export interface TurnAnchorInfo {
  turnId: string;
  agent: string | null;
  chatId: string;
  anchor: StoredTurnAnchor | null;
}

/** The branch HEAD is on, from the HEAD file alone (null when detached or unreadable). */
export function currentBranch(ctx: RepoContext): string | null {
  const ref = readSymbolicHead(ctx.repo.gitDir);
  return ref ? ref.slice('refs/heads/'.length) : null;
}

/** Files a version (a full commit id) changed against its first parent. Read-only. */
export async function changedFiles(
  ctx: RepoContext,
  oid: string,
): Promise<{ parent: string | null; files: ChangedFile[] }> {
  assertFullOid(oid);
  return changedFilesOf(ctx.repo.root, oid);
}

/** A file's text as it was in a version (a full commit id; null when it has no such file). Read-only. */
export async function fileAt(ctx: RepoContext, oid: string, path: string): Promise<string | null> {
  assertFullOid(oid);
  return readBlobAt(ctx.repo.root, oid, path);
}

/** A turn's base snapshot and the files where the working tree differs from it now. Read-only: writes no object. */
export async function turnChangesSoFar(
  ctx: RepoContext,
  turnId: unknown,
): Promise<{ base: string; files: ChangedFile[] }> {
  const id = validateTurnId(turnId);
  const turn = await ctx.store.read((r) => getTurn(r, id));
  if (!turn) throw new AvhError('turn-unknown', 'No turn with this id exists in this repository.');
  if (!turn.base_commit)
    throw new AvhError('invalid-input', 'This turn has no base snapshot (it stopped before it started).');
  const { changes } = await workingChanges(ctx.repo, [turn.base_commit]);
  return { base: turn.base_commit, files: changes.get(turn.base_commit) ?? [] };
}

/** The stored prompt of a turn, or null (never logged). Read-only. */
export function promptOf(ctx: RepoContext, turnId: string): Promise<string | null> {
  return ctx.store.read(
    (r) => r.get<{ prompt: string }>('SELECT prompt FROM turns WHERE id = ?', [turnId])?.prompt ?? null,
  );
}

/** A turn (hot, else archived) and its conversation anchor; an unknown turn is refused. Read-only. */
export async function turnAnchor(ctx: RepoContext, turnId: unknown): Promise<TurnAnchorInfo> {
  const id = validateTurnId(turnId);
  const read = (r: StoreReader) => {
    const turn = getTurn(r, id);
    return turn ? { turnId: id, agent: turn.agent, chatId: turn.chat_id, anchor: turnAnchorOf(r, id) } : null;
  };
  const found = (await ctx.store.read(read)) ?? (await ctx.store.read(read, { history: true }));
  if (!found) throw new AvhError('turn-unknown', 'No turn with this id exists in this repository.');
  return found;
}

/** The newest turns on the current branch (50 at most; none when HEAD is on no branch). Read-only. */
export async function conversationTurns(ctx: RepoContext): Promise<ConversationTurn[]> {
  const branch = currentBranch(ctx);
  if (branch === null) return [];
  return ctx.store.read((r) => conversationTurnsOf(r, branch, 50));
}

/** Whether this repository recorded the turn (the archive read only when the hot table lacks it). Read-only. */
export async function knowsTurn(ctx: RepoContext, turnId: string): Promise<boolean> {
  const known = (r: StoreReader) => getTurn(r, turnId) !== undefined;
  return (await ctx.store.read(known)) || ctx.store.read(known, { history: true });
}

function assertFullOid(oid: string): void {
  if (!FULL_OID.test(oid)) throw new AvhError('invalid-input', 'A version is named by its full commit id.');
}
