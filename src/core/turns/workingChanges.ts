/**
 * What a turn without a version changed so far: the files where the working tree differs from its base snapshot
 * (docs/design/turns-and-undo.md, "Files changed so far"). The running and stopped rows of Version History count
 * them and their Show Changes lists them; a cancelled or errored turn's end asks whether there are any. Read-only and
 * cheap: the health probe's one status, one `diff-tree` per base that is not HEAD, and an in-process hash of the few
 * files where the base differs from HEAD (the user's pre-turn edits). No object is written, no index is touched, no
 * secret filter runs (a view refresh must never decide what enters a version).
 */
import { nodeCrypto } from '../sha256';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { emptyTree } from '../git/commitObjects';
import { guessBranchTip } from '../git/healthProbe';
import type { GitRepository } from '../git/repository';
import { startProbeStatus, statusRecordPath } from '../git/statusProbe';
import type { ChangedFile } from '../git/versionLog';
import { type TreeChange, treeChanges } from '../git/worktreeUpdate';

export interface WorkingState {
  /** HEAD's commit, or null on an unborn branch. */
  head: string | null;
  /** No tracked change and no untracked file (what the probe calls clean). */
  clean: boolean;
  /** Per base commit asked for: the files where the working tree differs from it, by path. */
  changes: Map<string, ChangedFile[]>;
}

/** One entry of `git status --porcelain=v2 -z`: a path differing from HEAD (or the index), and whether HEAD has it. */
interface StatusEntry {
  path: string;
  inHead: boolean;
}

/**
 * The files where the working tree differs from each of `bases` (commits: a turn's base snapshot, or HEAD itself).
 * `status` is the probe's status output already started in this repository (the hook fast path starts it early).
 * Content is compared as stored bytes: a path under a clean/smudge filter or CRLF conversion may count as changed
 * when only its checkout form differs (never the other way round).
 */
export async function workingChanges(
  repo: GitRepository,
  bases: readonly string[],
  status?: Promise<string>,
): Promise<WorkingState> {
  const unique = [...new Set(bases)];
  const scanned = status ?? startProbeStatus(repo.root, repo.git, undefined, repo.gitDir);
  // The `diff-tree` of each base that is not HEAD runs beside the status, from HEAD as the ref files name it; it
  // counts only when the status reports that same HEAD (else it runs again from the HEAD git reported).
  const guess = guessBranchTip(repo.gitDir)?.head ?? null;
  const early = new Map(
    unique.filter((b) => guess !== null && b !== guess).map((b) => [b, settle(treeChanges(repo, guess!, b))]),
  );
  const { head, entries } = parseStatusEntries(await scanned);
  const from = unique.some((b) => b !== head) ? (head ?? (await emptyTree(repo))) : null;
  const differing = async (base: string): Promise<TreeChange[]> => {
    if (base === head) return [];
    const started = head === guess ? early.get(base) : undefined;
    const found = started ? await started : null;
    if (found && 'changes' in found) return found.changes;
    return treeChanges(repo, from!, base);
  };
  const changes = new Map<string, ChangedFile[]>();
  await Promise.all(
    unique.map(async (base) => changes.set(base, changedAgainst(repo.root, entries, await differing(base)))),
  );
  await Promise.all(early.values()); // none is left running (they never reject)
  return { head, clean: entries.length === 0, changes };
}

/** A lookup started ahead, whose failure is read later (or dropped) without an unhandled rejection. */
function settle(p: Promise<TreeChange[]>): Promise<{ changes: TreeChange[] } | { failed: true }> {
  return p.then(
    (changes) => ({ changes }),
    () => ({ failed: true as const }),
  );
}

/**
 * Whether the working tree differs from `base` now: what a cancelled or errored turn's end records (versionStateAtEnd)
 * and what the hook fast path decides the same way, from the same status.
 */
export async function changedSince(repo: GitRepository, base: string, status?: Promise<string>): Promise<boolean> {
  return ((await workingChanges(repo, [base], status)).changes.get(base)?.length ?? 0) > 0;
}

/**
 * The working tree against a base: where the base equals HEAD (no `differing` entry) a status entry is a change;
 * where it differs (`differing`, HEAD → base), the file on disk is compared with the base's blob.
 */
function changedAgainst(
  root: string,
  entries: readonly StatusEntry[],
  differing: readonly TreeChange[],
): ChangedFile[] {
  const atBase = new Map(differing.map((c) => [c.path, c]));
  const files: ChangedFile[] = [];
  for (const entry of entries) {
    if (atBase.has(entry.path)) continue;
    const exists = isFileOnDisk(root, entry.path);
    files.push({ path: entry.path, status: !exists ? 'deleted' : entry.inHead ? 'modified' : 'added' });
  }
  for (const change of differing) {
    if (change.mode === '160000' || change.oldMode === '160000') continue; // submodules are not versioned here
    const file = onDisk(root, change.path);
    if (change.oid === null) {
      if (file !== null) files.push({ path: change.path, status: 'added' });
    } else if (file === null) {
      files.push({ path: change.path, status: 'deleted' });
    } else if (blobId(file.bytes, change.oid.length) !== change.oid || file.mode !== change.mode) {
      files.push({ path: change.path, status: 'modified' });
    }
  }
  return files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** Whether a file (or symlink) is at `rel`: one lstat, nothing read. */
function isFileOnDisk(root: string, rel: string): boolean {
  try {
    const st = fs.lstatSync(path.join(root, rel));
    return st.isFile() || st.isSymbolicLink();
  } catch {
    return false;
  }
}

/** A path's content and git mode on disk (a symlink's target as its content), or null when no file is there. */
function onDisk(root: string, rel: string): { bytes: Buffer; mode: string } | null {
  const full = path.join(root, rel);
  try {
    const st = fs.lstatSync(full);
    if (st.isSymbolicLink()) return { bytes: Buffer.from(fs.readlinkSync(full)), mode: '120000' };
    if (!st.isFile()) return null;
    return { bytes: fs.readFileSync(full), mode: st.mode & 0o111 ? '100755' : '100644' };
  } catch {
    return null;
  }
}

/** The blob id git gives `bytes`, in the repository's hash (told by the length of an id it uses). */
function blobId(bytes: Buffer, oidLength: number): string {
  return nodeCrypto()
    .createHash(oidLength === 64 ? 'sha256' : 'sha1')
    .update(`blob ${bytes.length}\0`)
    .update(bytes)
    .digest('hex');
}

/**
 * HEAD and the changed paths of the probe's `git status --porcelain=v2 --branch -z --no-renames -uall` output.
 * A folder listed with a trailing slash is a nested repository (never versioned) and is left out.
 */
export function parseStatusEntries(stdout: string): { head: string | null; entries: StatusEntry[] } {
  let head: string | null = null;
  const entries: StatusEntry[] = [];
  const records = stdout.split('\0');
  for (let i = 0; i < records.length; i++) {
    const record = records[i];
    if (record.startsWith('# branch.oid ')) {
      const oid = record.slice('# branch.oid '.length);
      head = oid === '(initial)' ? null : oid;
    } else if (record.startsWith('1 ')) {
      entries.push({ path: statusRecordPath(record), inHead: record[2] !== 'A' });
    } else if (record.startsWith('2 ')) {
      entries.push({ path: statusRecordPath(record), inHead: true });
      i++; // the rename's original path follows as its own field
    } else if (record.startsWith('u ')) {
      entries.push({ path: statusRecordPath(record), inHead: true });
    } else if (record.startsWith('? ') && !record.endsWith('/')) {
      entries.push({ path: record.slice(2), inHead: false });
    }
  }
  return { head, entries };
}
