import type { RepoContext } from '../context';
import { AvhError } from '../errors';
import type { RestoreOptions, RestoreResult } from '../restore/restoreRequest';
import { runRestore } from '../restore/restoreService';
import { type CheckpointStep, checkpointSteps } from '../turns/checkpointSteps';
import { bringBackSavedFiles, checkpointById, type CheckpointRow, checkpointsOf } from '../turns/commandCheckpoints';
import { validateTurnId } from '../turns/validation';

/** A checkpoint taken before a destructive command of an agent (no command text: checkpointCommand reads it). */
export interface CheckpointInfo {
  id: string;
  turnId: string;
  chatId: string;
  label: string;
  commit: string;
  savedFiles: number;
  createdAt: number;
}

/** A checkpoint's id: a UUID as commandCheckpoints.ts makes them. */
const CHECKPOINT_ID = /^[0-9a-f-]{36}$/;

function checkpointInfo(c: CheckpointRow): CheckpointInfo {
  return {
    id: c.id,
    turnId: c.turn_id,
    chatId: c.chat_id,
    label: c.label,
    commit: c.commit_oid,
    savedFiles: c.saved_files,
    createdAt: c.created_at,
  };
}

/** The checkpoints of one turn (validated) or of all, oldest first, without command text. Read-only. */
export async function checkpointList(ctx: RepoContext, turnId?: unknown): Promise<CheckpointInfo[]> {
  const id = turnId === undefined ? undefined : validateTurnId(turnId);
  const rows = await ctx.store.read((r) => checkpointsOf(r, id));
  return rows.map(checkpointInfo);
}

/** One checkpoint without command text, or null for any input that names none of this repository's. Read-only. */
export async function checkpointInfoOf(ctx: RepoContext, id: unknown): Promise<CheckpointInfo | null> {
  if (typeof id !== 'string' || !CHECKPOINT_ID.test(id)) return null;
  const c = await ctx.store.read((r) => checkpointById(r, id));
  return c ? checkpointInfo(c) : null;
}

/** The checkpoints of turns that ended at or after `since`, oldest first, with their changed files. Read-only. */
export async function stepsOfEndedTurns(ctx: RepoContext, since: number): Promise<CheckpointStep[]> {
  const ended = await ctx.store.read((r) =>
    r.all<{ id: string; version_commit: string | null }>(
      `SELECT DISTINCT t.id, t.version_commit FROM turns t JOIN command_checkpoints c ON c.turn_id = t.id
       WHERE t.ended_at IS NOT NULL AND t.ended_at >= ?`,
      [since],
    ),
  );
  const steps = await checkpointSteps(
    ctx,
    ended.map((t) => ({ turnId: t.id, end: t.version_commit })),
  );
  return [...steps.values()].flat().sort((a, b) => a.createdAt - b.createdAt);
}

/** The command a checkpoint was taken before, or null (never logged). Read-only. */
export async function checkpointCommand(ctx: RepoContext, id: string): Promise<string | null> {
  return (await ctx.store.read((r) => checkpointById(r, id)))?.command ?? null;
}

/**
 * Restore to Before This Command through the one restore saga, then writes back the checkpoint's saved ignored files
 * that are missing (only after a restore that stands: restored or no change).
 */
export async function restoreBeforeCommand(
  ctx: RepoContext,
  checkpointId: unknown,
  options: RestoreOptions,
): Promise<RestoreResult & { broughtBack: number }> {
  if (typeof checkpointId !== 'string' || !CHECKPOINT_ID.test(checkpointId))
    throw new AvhError('invalid-input', 'A checkpoint id is 36 characters (agent-versions checkpoints lists them).');
  const row = await ctx.store.read((r) => checkpointById(r, checkpointId));
  if (!row) throw new AvhError('invalid-input', 'No checkpoint with this id exists in this repository.');
  const result = await runRestore(ctx, { kind: 'restore', target: row.commit_oid }, options);
  const broughtBack =
    result.result === 'restored' || result.result === 'no-change'
      ? bringBackSavedFiles(ctx.repo.stateDir, ctx.repo.root, row.id).length
      : 0;
  if (broughtBack > 0) ctx.log.info('restore.checkpoint-files', { checkpoint: row.id, files: broughtBack });
  return { ...result, broughtBack };
}
