import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { RepoContext } from '../context';
import { AvhError, isAvhError } from '../errors';
import { HEAVY_PATTERNS, LARGE_FILE_BYTES } from '../git/heavyFolders';
import { refsUnder } from '../git/history';
import { compareAndSetRef, ZERO_OID } from '../git/refUpdate';
import { commitWorkingTree } from '../git/workingTree';
import { OPERATIONS } from '../session/operationKinds';
import { runOperation } from '../session/runOperation';
import type { StoreReader, StoreTx } from '../store/durableStore';
import { openTurns } from './turnRecords';

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

export const CHECKPOINT_REF_PREFIX = 'refs/agent-versions/checkpoints/';
const SAVED_BYTES_CAP = 200 * 1024 * 1024;
const MANIFEST = 'manifest.json';

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

export interface CheckpointInput {
  chatId: string;
  /** The shell text the agent is about to run (stored with the turn, never logged). */
  command: string;
  /** What was recognised, content-free (`git reset --hard`). */
  label: string;
  /** The command can delete files git ignores: they are copied aside too. */
  reachesIgnored: boolean;
}

export interface CheckpointResult {
  checkpointId: string;
  turnId: string;
  commit: string;
  savedFiles: number;
}

/** The folder of a checkpoint's saved ignored files (owner-only). */
export function savedFilesDir(stateDir: string, id: string): string {
  return path.join(stateDir, 'checkpoints', id);
}

/**
 * Takes the checkpoint when the chat has a running turn (null otherwise: a command outside a turn is the user's
 * business and nothing records it). Under the turn lease, like a turn's begin: never of a half-restored tree.
 */
export function checkpointBeforeCommand(ctx: RepoContext, input: CheckpointInput): Promise<CheckpointResult | null> {
  return runOperation(ctx, OPERATIONS.commandCheckpoint, async ({ head }) => {
    const turn = await ctx.store.read((r) =>
      openTurns(r)
        .filter((t) => t.chat_id === input.chatId)
        .pop(),
    );
    if (!turn) return null;
    const id = crypto.randomUUID();
    const made = await commitWorkingTree(ctx.repo, {
      ref: `${CHECKPOINT_REF_PREFIX}${id}`,
      expected: ZERO_OID,
      parent: head,
      always: true,
      message: `Agent Version History checkpoint before a command\n\nAgent-Turn: ${turn.id}\nAgent-Checkpoint: ${id}\n`,
      reflog: 'agent-versions: checkpoint',
      installIndex: false,
    });
    if (!made.commit) throw new AvhError('git-failed', 'The checkpoint commit was not made.');
    const savedFiles = input.reachesIgnored ? await saveIgnoredFiles(ctx, id) : 0;
    const now = Date.now();
    await ctx.store.transaction((tx) => {
      tx.run(
        'INSERT INTO command_checkpoints (id, turn_id, chat_id, command, label, commit_oid, saved_files, created_at) ' +
          'VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
        [id, turn.id, input.chatId, input.command, input.label, made.commit, savedFiles, now],
      );
    });
    ctx.log.info('turn.checkpoint', { turn: turn.id, checkpoint: id, label: input.label, savedFiles });
    // The checkpoint is taken: a failed prune is logged (content-free) and tried again at the next one.
    await pruneCheckpointsUnderLease(ctx).catch((error: unknown) =>
      ctx.log.warn('turn.checkpoints-prune-failed', { reason: isAvhError(error) ? error.reason : 'unexpected' }),
    );
    return { checkpointId: id, turnId: turn.id, commit: made.commit, savedFiles };
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

interface SavedEntry {
  path: string;
  mode: number;
  link?: string;
}

/** Copies the ignored files (see the module comment for what is left out); returns how many were kept. */
async function saveIgnoredFiles(ctx: RepoContext, id: string): Promise<number> {
  const { repo } = ctx;
  const { stdout } = await repo.git.run(repo.root, [
    'ls-files',
    '-z',
    '--others',
    '--ignored',
    '--exclude-standard',
    '--directory',
  ]);
  const heavy = new Set(HEAVY_PATTERNS.map((p) => p.replace(/\/$/, '')));
  const files: string[] = [];
  const walk = (rel: string, depth: number): void => {
    if (depth > 64) return;
    const abs = path.join(repo.root, rel);
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(abs, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      if (heavy.has(e.name) || e.name === '.git') continue;
      const child = `${rel}/${e.name}`;
      if (e.isDirectory()) walk(child, depth + 1);
      else if (e.isFile() || e.isSymbolicLink()) files.push(child);
    }
  };
  for (const entry of stdout.split('\0')) {
    if (!entry) continue;
    const rel = entry.replace(/\/$/, '');
    if (rel.split('/').some((part) => heavy.has(part))) continue;
    if (entry.endsWith('/')) walk(rel, 0);
    else files.push(rel);
  }
  if (files.length === 0) return 0;
  const dir = savedFilesDir(repo.stateDir, id);
  fs.mkdirSync(path.join(dir, 'files'), { recursive: true, mode: 0o700 });
  const kept: SavedEntry[] = [];
  let bytes = 0;
  for (const rel of files) {
    const from = path.join(repo.root, rel);
    let st: fs.Stats;
    try {
      st = fs.lstatSync(from);
    } catch {
      continue;
    }
    const to = path.join(dir, 'files', rel);
    try {
      if (st.isSymbolicLink()) {
        kept.push({ path: rel, mode: 0o120000, link: fs.readlinkSync(from) });
        continue;
      }
      if (!st.isFile() || st.size > LARGE_FILE_BYTES || bytes + st.size > SAVED_BYTES_CAP) continue;
      fs.mkdirSync(path.dirname(to), { recursive: true, mode: 0o700 });
      fs.copyFileSync(from, to);
      fs.chmodSync(to, 0o600);
      bytes += st.size;
      kept.push({ path: rel, mode: st.mode & 0o111 ? 0o100755 : 0o100644 });
    } catch {
      // A file that vanished or cannot be read is not kept; the others are.
    }
  }
  fs.writeFileSync(path.join(dir, MANIFEST), JSON.stringify(kept), { mode: 0o600 });
  return kept.length;
}

/** The paths of a checkpoint's saved ignored files (its manifest; none when it kept none or it is unreadable). */
export function savedFilePaths(stateDir: string, id: string): string[] {
  try {
    const kept = JSON.parse(fs.readFileSync(path.join(savedFilesDir(stateDir, id), MANIFEST), 'utf8')) as unknown;
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
    kept = JSON.parse(fs.readFileSync(path.join(dir, MANIFEST), 'utf8')) as SavedEntry[];
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
