import * as fs from 'node:fs';
import * as path from 'node:path';
import type { RepoContext } from '../context';
import { isAvhError } from '../errors';
import { refsUnder } from '../git/history';
import { compareAndSetRef, ZERO_OID } from '../git/refUpdate';
import { OPERATIONS } from '../operations/operationKinds';
import { runOperation } from '../operations/runOperation';
import type { StoreReader, StoreTx } from '../store/durableStore';
import {
  CHECKPOINT_REF_PREFIX,
  type CheckpointInput,
  discardCheckpoint,
  SAVED_FILES_MANIFEST,
  type SavedEntry,
  savedFilesDir,
  takeCheckpoint,
} from './checkpointSnapshot';
import { openTurns, runStatement } from './turnRecords';

/**
 * A checkpoint just before a running turn's agent runs a command that destroys working-tree content (issue 34;
 * docs/design/command-checkpoints.md): `git reset --hard`, `git clean -fdx`, `git stash`, `rm -rf src`, …
 *
 * - The working tree (tracked, untracked, the staged tree as the base snapshot takes it) becomes a private commit on
 *   `refs/agent-versions/checkpoints/<id>`, parent HEAD; HEAD, the index and the files are left as they are.
 * - For commands that reach ignored files (`git clean -x`, `rm` of paths), the ignored files that are not in that
 *   commit are copied beside the store (`<state>/checkpoints/<id>/`, owner-only), never into a ref: `.env` and other
 *   files our secret rules keep out of versions are among them, and a ref would travel with `git push --mirror`.
 *   Files over LARGE_FILE_BYTES are not copied, nor more than SAVED_BYTES_CAP in all; dependency and build folders
 *   (HEAVY_PATTERNS) only for `git clean -x`, each whole or not at all (checkpointSnapshot.ts).
 * - The row (command text kept like a prompt: never logged) belongs to the turn; Restore to Before This Command is a
 *   restore of the commit through the one saga, then the saved ignored files that are missing are written back.
 */

export { CHECKPOINT_REF_PREFIX, savedFilesDir } from './checkpointSnapshot';
export type { CheckpointInput } from './checkpointSnapshot';

export interface CheckpointRow {
  id: string;
  turn_id: string;
  chat_id: string;
  command: string;
  label: string;
  commit_oid: string;
  saved_files: number;
  created_at: number;
}

export interface CheckpointResult {
  checkpointId: string;
  turnId: string;
  commit: string;
  savedFiles: number;
}

/**
 * Takes the checkpoint when the chat has a running turn (null otherwise: a command outside a turn is the user's
 * business and nothing records it), or null when the command can destroy nothing here (takeCheckpoint). Under the
 * turn lease, like a turn's begin: never of a half-restored tree. The hook's fast path takes it the same way
 * (cli/hooks/fastPlans.ts planCheckpoint), through the same sequence.
 */
export function checkpointBeforeCommand(ctx: RepoContext, input: CheckpointInput): Promise<CheckpointResult | null> {
  return runOperation(ctx, OPERATIONS.commandCheckpoint, async ({ head, health }) => {
    const turn = await ctx.store.read((r) =>
      openTurns(r)
        .filter((t) => t.chat_id === input.chatId)
        .pop(),
    );
    if (!turn) return null;
    const taken = await takeCheckpoint(ctx.repo, { turnId: turn.id, head, health }, input, Date.now());
    if (!taken) return null;
    try {
      await ctx.store.transaction((tx) => runStatement(tx, taken.statement));
    } catch (error) {
      await discardCheckpoint(ctx.repo, taken).catch(() => undefined);
      throw error;
    }
    const { savedFiles } = taken;
    ctx.log.info('turn.checkpoint', { turn: turn.id, checkpoint: taken.id, label: input.label, savedFiles });
    // The checkpoint is taken: a failed prune is logged (content-free) and tried again at the next one.
    await pruneCheckpointsUnderLease(ctx).catch((error: unknown) =>
      ctx.log.warn('turn.checkpoints-prune-failed', { reason: isAvhError(error) ? error.reason : 'unexpected' }),
    );
    return { checkpointId: taken.id, turnId: turn.id, commit: taken.commit, savedFiles: taken.savedFiles };
  });
}

export function checkpointById(r: StoreReader | StoreTx, id: string): CheckpointRow | undefined {
  return r.get<CheckpointRow>('SELECT * FROM command_checkpoints WHERE id = ?', [id]);
}

/** A turn's checkpoints in the order they were taken (every turn's, newest turns last, without `turnId`). */
export function checkpointsOf(r: StoreReader | StoreTx, turnId?: string): CheckpointRow[] {
  return turnId === undefined
    ? r.all<CheckpointRow>('SELECT * FROM command_checkpoints ORDER BY created_at, rowid')
    : r.all<CheckpointRow>('SELECT * FROM command_checkpoints WHERE turn_id = ? ORDER BY created_at, rowid', [turnId]);
}

/** The paths of a checkpoint's saved ignored files (its manifest; none when it kept none or it is unreadable). */
export function savedFilePaths(stateDir: string, id: string): string[] {
  try {
    const kept = JSON.parse(
      fs.readFileSync(path.join(savedFilesDir(stateDir, id), SAVED_FILES_MANIFEST), 'utf8'),
    ) as unknown;
    if (!Array.isArray(kept)) return [];
    return kept.flatMap((e: Partial<SavedEntry> | null) => (typeof e?.path === 'string' ? [e.path] : []));
  } catch {
    return [];
  }
}

/**
 * Pruning (docs/design/command-checkpoints.md, "Pruned with the turn's history"): a checkpoint lives as long as its
 * turn is in the hot store. Once the history archive moves the turn out (docs/design/history-archive.md: the newest
 * 1,500 finished turns and each chat's newest stay), its ref, its saved ignored files and its row go, in that order
 * (a crash between them leaves the row, and the next prune finishes it: deleting a ref or folder already gone is
 * success). A ref or folder with no row (a checkpoint killed before its row was written) goes with them. Runs under
 * the turn lease, after each new checkpoint, so a checkpoint being taken is never swept; returns how many rows went.
 */
export async function pruneCheckpointsUnderLease(ctx: RepoContext): Promise<number> {
  // Hot only: `turns` here is the hot table, so a turn the archive holds is "not there".
  const gone = await ctx.store.read((r) =>
    r.all<{ id: string; commit_oid: string }>(
      'SELECT id, commit_oid FROM command_checkpoints WHERE turn_id NOT IN (SELECT id FROM turns)',
    ),
  );
  if (gone.length === 0) return 0;
  const { repo } = ctx;
  for (const c of gone) {
    await compareAndSetRef(repo, `${CHECKPOINT_REF_PREFIX}${c.id}`, ZERO_OID, c.commit_oid, 'agent-versions: prune');
    fs.rmSync(savedFilesDir(repo.stateDir, c.id), { recursive: true, force: true });
  }
  await ctx.store.transaction((tx) => {
    for (const c of gone) tx.run('DELETE FROM command_checkpoints WHERE id = ?', [c.id]);
  });
  // Leftovers of a checkpoint that never got its row: a ref or a folder no row names.
  const known = new Set(
    await ctx.store.read((r) => r.all<{ id: string }>('SELECT id FROM command_checkpoints').map((k) => k.id)),
  );
  for (const [id, oid] of await refsUnder(repo, CHECKPOINT_REF_PREFIX))
    if (!known.has(id))
      await compareAndSetRef(repo, `${CHECKPOINT_REF_PREFIX}${id}`, ZERO_OID, oid, 'agent-versions: prune');
  let folders: string[] = [];
  try {
    folders = fs.readdirSync(path.join(repo.stateDir, 'checkpoints'));
  } catch {
    // no folder: nothing was ever saved
  }
  for (const id of folders)
    if (!known.has(id)) fs.rmSync(savedFilesDir(repo.stateDir, id), { recursive: true, force: true });
  ctx.log.info('turn.checkpoints-pruned', { checkpoints: gone.length });
  return gone.length;
}

/**
 * After Restore to Before This Command: the saved ignored files that are missing now are written back (one that
 * exists is never overwritten: it is newer than the checkpoint, or the user's). Returns the paths written.
 */
export function bringBackSavedFiles(stateDir: string, root: string, id: string): string[] {
  const dir = savedFilesDir(stateDir, id);
  let kept: SavedEntry[];
  try {
    kept = JSON.parse(fs.readFileSync(path.join(dir, SAVED_FILES_MANIFEST), 'utf8')) as SavedEntry[];
  } catch {
    return [];
  }
  const written: string[] = [];
  for (const entry of kept) {
    if (typeof entry?.path !== 'string' || entry.path.split('/').some((p) => p === '..' || p === '' || p === '.git'))
      continue;
    const to = path.join(root, entry.path);
    try {
      fs.lstatSync(to);
      continue; // present: never overwritten
    } catch {
      // missing: written back below
    }
    try {
      fs.mkdirSync(path.dirname(to), { recursive: true });
      if (entry.link !== undefined) fs.symlinkSync(entry.link, to);
      else {
        fs.copyFileSync(path.join(dir, 'files', entry.path), to);
        fs.chmodSync(to, entry.mode === 0o100755 ? 0o755 : 0o644);
      }
      written.push(entry.path);
    } catch {
      // A path whose folder became a file is left as it is.
    }
  }
  return written;
}
