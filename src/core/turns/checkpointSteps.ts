/**
 * What each checkpoint taken before an agent's destructive command (commandCheckpoints.ts) stands for at the turn's
 * end: the files that were there just before the command and are changed or gone at the end of the turn — what
 * Restore to Before This Command brings back (docs/design/command-checkpoints.md, "Steps in Version History").
 *
 * - The turn's end is its version when it made one (the checkpoint's commit against the version's: two commits,
 *   so the answer never changes and is kept in memory); otherwise (running, stopped, no version) the working tree
 *   now, one status for all of them.
 * - The ignored files a checkpoint saved aside (`.env`, logs) are in no commit: each one missing from the working
 *   tree now counts as deleted.
 * - Files the turn added after the command are not listed: they are not what the command destroyed.
 * Read-only: no object written, no index touched.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { RepoContext } from '../context';
import type { ChangedFile } from '../git/versionLog';
import { treeChanges } from '../git/worktreeUpdate';
import type { StoreReader } from '../store/durableStore';
import { type CheckpointRow, savedFilePaths } from './commandCheckpoints';
import { workingChanges } from './workingChanges';

export interface CheckpointStep {
  id: string;
  turnId: string;
  /** What was recognised, content-free (`git reset --hard`). */
  label: string;
  /** The shell text the agent ran: shown to the user like a prompt, never logged. */
  command: string;
  /** When it was taken, milliseconds since the epoch. */
  createdAt: number;
  /** Ignored files kept beside the store. */
  savedFiles: number;
  /** Files there before the command and changed or gone at the turn's end, sorted by path. */
  files: { path: string; status: 'modified' | 'deleted' }[];
}

/** A turn whose checkpoints are wanted, with its end: its version's commit, or null for the working tree now. */
export interface StepTurn {
  turnId: string;
  end: string | null;
}

/** Checkpoint-to-version differences, by "checkpoint..version": two commits, so the answer is fixed. */
const byCommits = new Map<string, ChangedFile[]>();
const MAX_REMEMBERED = 2000;

/** The checkpoints of `turns`, oldest first per turn, each with its files (see the module comment). */
export async function checkpointSteps(
  ctx: RepoContext,
  turns: readonly StepTurn[],
): Promise<Map<string, CheckpointStep[]>> {
  const steps = new Map<string, CheckpointStep[]>();
  if (turns.length === 0) return steps;
  const ids = turns.map((t) => t.turnId);
  const rows = await ctx.store.read((r) => checkpointRowsOf(r, ids));
  if (rows.length === 0) return steps;
  const endOf = new Map(turns.map((t) => [t.turnId, t.end]));
  const live = rows.filter((c) => endOf.get(c.turn_id) === null).map((c) => c.commit_oid);
  const working = live.length > 0 ? (await workingChanges(ctx.repo, live)).changes : new Map<string, ChangedFile[]>();
  for (const c of rows) {
    const end = endOf.get(c.turn_id) ?? null;
    const changed = end === null ? (working.get(c.commit_oid) ?? []) : await versionChanges(ctx, c.commit_oid, end);
    const files = new Map<string, 'modified' | 'deleted'>();
    for (const f of changed) if (f.status !== 'added') files.set(f.path, f.status);
    if (c.saved_files > 0)
      for (const saved of savedFilePaths(ctx.repo.stateDir, c.id))
        if (!files.has(saved) && !exists(ctx.repo.root, saved)) files.set(saved, 'deleted');
    const step: CheckpointStep = {
      id: c.id,
      turnId: c.turn_id,
      label: c.label,
      command: c.command,
      createdAt: c.created_at,
      savedFiles: c.saved_files,
      files: [...files]
        .map(([p, status]) => ({ path: p, status }))
        .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)),
    };
    const list = steps.get(c.turn_id);
    if (list) list.push(step);
    else steps.set(c.turn_id, [step]);
  }
  return steps;
}

function checkpointRowsOf(r: StoreReader, turnIds: readonly string[]): CheckpointRow[] {
  // The usual case, no checkpoint at all: one lookup, not one per 500 turns of the page.
  if (r.get('SELECT 1 AS x FROM command_checkpoints LIMIT 1') === undefined) return [];
  const rows: CheckpointRow[] = [];
  for (let i = 0; i < turnIds.length; i += 500) {
    const chunk = turnIds.slice(i, i + 500);
    rows.push(
      ...r.all<CheckpointRow>(
        `SELECT * FROM command_checkpoints WHERE turn_id IN (${chunk.map(() => '?').join(',')})
         ORDER BY created_at, rowid`,
        chunk,
      ),
    );
  }
  return rows;
}

/** The checkpoint's files against the turn's version: changed (both have it) or deleted (the version has not). */
async function versionChanges(ctx: RepoContext, checkpoint: string, version: string): Promise<ChangedFile[]> {
  const key = `${checkpoint}..${version}`;
  const known = byCommits.get(key);
  if (known) return known;
  const files: ChangedFile[] = [];
  for (const c of await treeChanges(ctx.repo, checkpoint, version)) {
    if (c.oldOid === null || c.mode === '160000' || c.oldMode === '160000') continue; // added later; submodules
    files.push({ path: c.path, status: c.oid === null ? 'deleted' : 'modified' });
  }
  if (byCommits.size >= MAX_REMEMBERED) byCommits.delete(byCommits.keys().next().value!);
  byCommits.set(key, files);
  return files;
}

/** Whether anything (file, symlink, folder) is at `rel` now: one lstat. */
function exists(root: string, rel: string): boolean {
  try {
    fs.lstatSync(path.join(root, rel));
    return true;
  } catch {
    return false;
  }
}
