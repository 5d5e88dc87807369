import * as fs from 'node:fs';
import * as path from 'node:path';
import type { RepoContext } from '../context';
import { OPERATIONS } from '../session/operationKinds';
import { runOperation } from '../session/runOperation';
import type { StoreReader, StoreTx } from '../store/durableStore';
import {
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
 *   Dependency and build folders (HEAVY_PATTERNS) and files over LARGE_FILE_BYTES are not copied (reinstallable, and
 *   not worth the disk), nor more than SAVED_BYTES_CAP in all.
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
