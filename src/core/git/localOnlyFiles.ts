import * as path from 'node:path';
import { AvhError, NOTHING_CHANGED } from '../errors';
import { existingPaths, type FlaggedEntry, flaggedFromLsFiles, readFlaggedEntries } from './indexFlags';
import { printableName } from './pathBytes';
import { readRef } from './refUpdate';
import { objectFormatFromFiles, type GitRepository } from './repository';
import type { TemporaryIndex } from './temporaryIndex';

/**
 * Files git is told not to look at (issue 25; docs/design/repositories.md "Index flags"). `git status` and
 * `git add` skip an index entry marked skip-worktree or assume-unchanged, so an edit there would be in no snapshot
 * and Undo would leave the agent's rewrite. The decision:
 *
 * - Every snapshot sees them as they are: the flags are cleared in the temporary index only, then set back.
 * - A sparse checkout's skip-worktree files and core.ignoreStat's assume-unchanged bits are git's own bookkeeping:
 *   those files are captured like any other.
 * - A user's own `--skip-worktree` / `--assume-unchanged` means "local only": no commit we put on the branch holds
 *   such a file's local content (the branch keeps the index entry's blob), and the real content goes into a
 *   private "local layer" commit, `refs/agent-versions/local/<commit>`, beside every commit of ours it differs from.
 * - A restore writes those files from the target's layer (git restore --ignore-skip-worktree-bits: the index entry
 *   and its flag stay), after checking that what is there now is held by a layer or the index; otherwise it refuses,
 *   naming the file, before anything moves.
 */

export const LOCAL_REF_PREFIX = 'refs/agent-versions/local/';
export const LOCAL_LAYER_SUBJECT = 'Agent Version History: local-only files';

/** The flagged entries of `index` (the repository's own when omitted) whose file exists: changes git cannot see. */
async function hiddenEntries(repo: GitRepository, index?: TemporaryIndex): Promise<FlaggedEntry[]> {
  const file = index?.file ?? path.join(repo.gitDir, 'index');
  let flagged = readFlaggedEntries(file, objectFormatFromFiles(repo));
  if (flagged === null) {
    const env = index?.env ?? {};
    flagged = flaggedFromLsFiles((await repo.git.run(repo.root, ['ls-files', '-v', '-s', '-z'], { env })).stdout);
  }
  if (flagged.length === 0) return [];
  // Absent: a sparse checkout's files outside the cone (or a deletion git was told to ignore): nothing to capture.
  const present = new Set(
    existingPaths(
      repo.root,
      flagged.map((e) => e.path),
    ),
  );
  return flagged.filter((e) => present.has(e.path));
}

/** Which hidden entries are the user's "local only" (see above), from core.sparseCheckout and core.ignoreStat. */
async function localOnlyOf(repo: GitRepository, hidden: readonly FlaggedEntry[]): Promise<FlaggedEntry[]> {
  const { stdout } = await repo.git.run(
    repo.root,
    ['config', '-z', '--type=bool', '--get-regexp', '^core\\.(sparsecheckout|ignorestat)$'],
    { okCodes: [1] },
  );
  const config = new Map<string, boolean>();
  for (const record of stdout.split('\0')) {
    const [key, value] = record.split('\n');
    if (key) config.set(key.toLowerCase(), value === 'true');
  }
  const sparse = config.get('core.sparsecheckout') === true;
  const ignoreStat = config.get('core.ignorestat') === true;
  return hidden.filter((e) => (e.skipWorktree ? !sparse : e.assumeUnchanged && !ignoreStat));
}

/** What a snapshot uncovered in its temporary index, to cover again once the tree is written. */
export interface Uncovered {
  hidden: FlaggedEntry[];
  localOnly: FlaggedEntry[];
}

const update = (repo: GitRepository, index: TemporaryIndex, flag: string, paths: readonly string[]) =>
  paths.length === 0
    ? Promise.resolve()
    : repo.git
        .run(repo.root, ['update-index', flag, '-z', '--stdin'], {
          env: index.env,
          input: paths.map((p) => `${p}\0`).join(''),
        })
        .then(() => undefined);

/**
 * Clears, in the temporary index only, the flags that would hide a change from `add`: assume-unchanged on every
 * hidden entry, skip-worktree on the local-only ones (a sparse checkout's are staged by `add --sparse`). Two
 * commands: one update-index with both options applies only one of them.
 */
export async function uncoverHiddenEntries(repo: GitRepository, index: TemporaryIndex): Promise<Uncovered> {
  const hidden = await hiddenEntries(repo, index);
  if (hidden.length === 0) return { hidden, localOnly: [] };
  const localOnly = await localOnlyOf(repo, hidden);
  await update(
    repo,
    index,
    '--no-skip-worktree',
    localOnly.filter((e) => e.skipWorktree).map((e) => e.path),
  );
  await update(
    repo,
    index,
    '--no-assume-unchanged',
    hidden.filter((e) => e.assumeUnchanged).map((e) => e.path),
  );
  return { hidden, localOnly };
}

/**
 * After the real tree is written: local-only entries go back to what the index held (the branch's blob), and every
 * flag cleared by uncoverHiddenEntries is set again, so the index installed after a version is flagged as the user
 * left it. Returns the tree for the branch (the real one when nothing is local only).
 */
export async function coverAgain(
  repo: GitRepository,
  index: TemporaryIndex,
  uncovered: Uncovered,
  realTree: string,
): Promise<string> {
  if (uncovered.hidden.length === 0) return realTree;
  let tree = realTree;
  if (uncovered.localOnly.length > 0) {
    await repo.git.run(repo.root, ['update-index', '-z', '--index-info'], {
      env: index.env,
      input: uncovered.localOnly.map((e) => `${e.mode} ${e.oid}\t${e.path}\0`).join(''),
    });
    tree = (await repo.git.run(repo.root, ['write-tree'], { env: index.env })).stdout.trim();
  }
  const local = new Set(uncovered.localOnly.map((e) => e.path));
  await update(
    repo,
    index,
    '--skip-worktree',
    uncovered.localOnly.filter((e) => e.skipWorktree).map((e) => e.path),
  );
  try {
    await update(
      repo,
      index,
      '--assume-unchanged',
      uncovered.hidden.filter((e) => e.assumeUnchanged).map((e) => e.path),
    );
  } catch (error) {
    // core.ignoreStat's bits are a speed hint (a file deleted meanwhile cannot be marked); a user's flag is not.
    if (uncovered.hidden.some((e) => e.assumeUnchanged && local.has(e.path))) throw error;
  }
  return tree;
}

/** The local layer kept beside `commit` (see above), or null when it has none. Read-only. */
export function localLayerOf(repo: GitRepository, commit: string): Promise<string | null> {
  return readRef(repo, `${LOCAL_REF_PREFIX}${commit}`);
}

/** `ls-tree` of `rev` at `paths`: path → `<mode> <oid>` (absent paths are missing from the map). */
async function entriesAt(repo: GitRepository, rev: string, paths: readonly string[]): Promise<Map<string, string>> {
  const { stdout } = await repo.git.run(repo.root, ['ls-tree', '-z', '--full-tree', rev, '--', ...paths], {
    env: { GIT_LITERAL_PATHSPECS: '1' },
  });
  const found = new Map<string, string>();
  for (const record of stdout.split('\0')) {
    const match = /^(\d+) \w+ ([0-9a-f]+)\t([\s\S]+)$/.exec(record);
    if (match) found.set(match[3], `${match[1]} ${match[2]}`);
  }
  return found;
}

/** One local-only file an update writes: the TreeChange shape of worktreeUpdate.ts. */
export interface LocalOnlyChange {
  path: string;
  oldMode: string;
  oldOid: string | null;
  mode: string;
  oid: string | null;
}

/**
 * The local-only files an update from `from` to `to` writes (restoreLocalOnlyFiles): those whose content in
 * `to`'s local layer differs from `from`'s (or from `from`'s tree where it has none). None when `to` has no layer:
 * the update then leaves them as they are. Read-only; no git process when no index entry is flagged.
 */
export async function localOnlyChanges(repo: GitRepository, from: string, to: string): Promise<LocalOnlyChange[]> {
  const hidden = await hiddenEntries(repo);
  if (hidden.length === 0) return [];
  const local = await localOnlyOf(repo, hidden);
  if (local.length === 0) return [];
  const [fromLayer, toLayer] = await Promise.all([localLayerOf(repo, from), localLayerOf(repo, to)]);
  if (!toLayer) return [];
  const paths = local.map((e) => e.path);
  const [before, after] = await Promise.all([
    entriesAt(repo, fromLayer ?? from, paths),
    entriesAt(repo, toLayer, paths),
  ]);
  const changes: LocalOnlyChange[] = [];
  for (const p of paths) {
    const [oldMode, oldOid = null] = before.get(p)?.split(' ') ?? ['000000'];
    const [mode, oid = null] = after.get(p)?.split(' ') ?? ['000000'];
    if (oldMode !== mode || oldOid !== oid) changes.push({ path: p, oldMode, oldOid, mode, oid });
  }
  return changes;
}

const FLAG_NAME = (e: FlaggedEntry) => (e.skipWorktree ? '--skip-worktree' : '--assume-unchanged');

/**
 * Before a restore's read-tree moves index and files from `from` to `to`: the local-only files. When the update
 * writes them, each must hold what a local layer or the index holds (else the refusal names it, and nothing moved);
 * always, `from` and `to` must agree on its index entry (a version that changes the branch's blob of a local-only
 * file is refused, naming it: clear the flag first). Then, when `target` (the commit the restore returns to) has a
 * local layer, its content is written to them, index entries and flags untouched; the layer is recorded for `to`
 * as well, so a Redo finds it. Safe to run twice.
 */
export async function restoreLocalOnlyFiles(
  repo: GitRepository,
  from: string,
  to: string,
  target: string | null,
): Promise<void> {
  const hidden = await hiddenEntries(repo);
  if (hidden.length === 0) return;
  const local = await localOnlyOf(repo, hidden);
  if (local.length === 0) return;
  const paths = local.map((e) => e.path);
  const [fromLayer, targetLayer] = await Promise.all([
    localLayerOf(repo, from),
    target ? localLayerOf(repo, target) : Promise.resolve(null),
  ]);
  const [before, after, fromHeld, targetHeld, hashed] = await Promise.all([
    entriesAt(repo, from, paths),
    entriesAt(repo, to, paths),
    fromLayer ? entriesAt(repo, fromLayer, paths) : Promise.resolve(new Map<string, string>()),
    targetLayer ? entriesAt(repo, targetLayer, paths) : Promise.resolve(new Map<string, string>()),
    repo.git.run(repo.root, ['hash-object', '--stdin-paths'], { input: paths.map((p) => `${p}\n`).join('') }),
  ]);
  const current = hashed.stdout.split('\n');
  local.forEach((entry, i) => {
    const oidOf = (held: Map<string, string>) => held.get(entry.path)?.split(' ')[1];
    const name = printableName(entry.path);
    if (before.get(entry.path) !== after.get(entry.path))
      throw localOnlyRefusal(
        `${name} is marked ${FLAG_NAME(entry)} (local only), and this version changes it. Run \`git update-index ` +
          `--no-${FLAG_NAME(entry).slice(2)} -- ${name}\` to let versions hold it, then try again.`,
        entry,
      );
    // Only a file about to be written must hold what some version holds (an update that keeps it needs nothing).
    const known = [entry.oid, oidOf(fromHeld), oidOf(targetHeld)];
    if (targetLayer && !known.includes(current[i]))
      throw localOnlyRefusal(
        `${name} is marked ${FLAG_NAME(entry)} (local only) and holds changes no version has. Copy it aside, ` +
          'then try again.',
        entry,
      );
  });
  const layer = targetLayer ?? fromLayer;
  if (!layer) return;
  if (targetLayer) {
    const stale = local.filter((entry, i) => targetHeld.get(entry.path)?.split(' ')[1] !== current[i]);
    if (stale.length > 0) {
      // Absent from the layer: the file did not exist then, and restore deletes it.
      await repo.git.run(
        repo.root,
        [
          'restore',
          `--source=${targetLayer}`,
          '--worktree',
          '--ignore-skip-worktree-bits',
          '--pathspec-from-file=-',
          '--pathspec-file-nul',
        ],
        { env: { GIT_LITERAL_PATHSPECS: '1' }, input: stale.map((e) => `${e.path}\0`).join('') },
      );
    }
  }
  await repo.git.run(repo.root, ['update-ref', `${LOCAL_REF_PREFIX}${to}`, layer]);
}

function localOnlyRefusal(statement: string, entry: FlaggedEntry): AvhError {
  return new AvhError('dirty-conflict', statement, { file: entry.path }, { closing: NOTHING_CHANGED });
}
