import type { RepoContext } from '../context';
import { changedPaths } from '../git/history';
import type { PathFromCommit } from '../git/workingTree';
import { openTurns, type TurnRow } from './turnRecords';
import { chatReportsWrites, chatWritesSince, recordOverlap, type TurnWritesRecord } from './toolWrites';

/**
 * Two chats in one working tree (docs/design/two-chats.md): what a turn's version leaves out because another chat's
 * turn, still running, reported writing it, and which running turns ran shell commands (their edits cannot be told
 * apart). Read-only.
 */
export interface ConcurrentVersion {
  /** Paths only another running turn reported writing: the version takes them from that turn's base snapshot. */
  fromCommits: PathFromCommit[];
  /** Every path another running turn reported writing (taken from its base, or written by this turn too). */
  othersReported: Set<string>;
  /** Other chats' running turns that ran shell commands. */
  shellTurns: TurnRow[];
  /** Paths this turn and another running turn both reported writing (the version holds the tree's content). */
  shared: Map<string, TurnRow[]>;
}

/**
 * The other chats' running turns at `turn`'s end, and what each reported since it began. A path this turn reported
 * too stays the working tree's (both wrote it; this turn's version holds what is there). A running turn whose base
 * is not recorded yet cannot give a pre-turn content: its paths are treated like shell edits (kept, named).
 */
export async function concurrentVersion(
  ctx: RepoContext,
  turn: TurnRow,
  own: TurnWritesRecord,
): Promise<ConcurrentVersion> {
  const others = await ctx.store.read((r) =>
    openTurns(r).filter((t) => t.id !== turn.id && t.chat_id !== turn.chat_id),
  );
  const result: ConcurrentVersion = { fromCommits: [], othersReported: new Set(), shellTurns: [], shared: new Map() };
  if (others.length === 0) return result;
  const ownPaths = new Set(own.paths);
  const taken = new Set<string>();
  // Oldest first: a path two other turns wrote gets the content from before the first of them.
  for (const other of others) {
    const writes = chatWritesSince(ctx.repo.stateDir, other.chat_id, other.created_at);
    // A turn whose chat reports no tool writes (plain `turn begin`/`turn end`) is like one that ran shell
    // commands: whatever changed while it ran may be its edit, so an Undo of either asks (issue 33, item 4).
    const unreported =
      !writes.shell && writes.paths.length === 0 && !chatReportsWrites(ctx.repo.stateDir, other.chat_id);
    if (writes.shell || unreported || (other.base_commit === null && writes.paths.length > 0))
      result.shellTurns.push(other);
    for (const p of writes.paths) {
      result.othersReported.add(p);
      if (ownPaths.has(p)) result.shared.set(p, [...(result.shared.get(p) ?? []), other]);
      if (ownPaths.has(p) || taken.has(p) || other.base_commit === null) continue;
      taken.add(p);
      result.fromCommits.push({ path: p, commit: other.base_commit });
    }
  }
  return result;
}

/**
 * After the version was made: the paths it holds that may hold another chat's edits — ones this turn and another
 * chat's running turn both reported writing, and, when such a turn ran shell commands, the ones the version changed
 * that no turn reported. They stay in the version (today's whole-tree rule) and are recorded with the turn, so an
 * Undo of it names those chats and files and asks (restore/otherChatWrites.ts). Returns how many paths.
 */
export async function noteOverlap(
  ctx: RepoContext,
  turn: TurnRow,
  own: TurnWritesRecord,
  concurrent: ConcurrentVersion,
  parentTree: string,
  tree: string,
): Promise<number> {
  const chats = new Map<string, TurnRow>();
  const paths = new Set<string>();
  for (const [p, turns] of concurrent.shared) {
    paths.add(p);
    for (const t of turns) chats.set(t.id, t);
  }
  if (concurrent.shellTurns.length > 0) {
    const changed = await changedPaths(ctx.repo, parentTree, tree);
    const reported = new Set([...own.paths, ...concurrent.othersReported]);
    const unreported = changed.filter((p) => !reported.has(p));
    for (const p of unreported) paths.add(p);
    if (unreported.length > 0) for (const t of concurrent.shellTurns) chats.set(t.id, t);
  }
  if (paths.size === 0) return 0;
  recordOverlap(ctx.repo.stateDir, turn.id, own, {
    chats: [...chats.values()].map((t) => ({ chatId: t.chat_id, turnId: t.id, agent: t.agent })),
    paths: [...paths].sort(),
  });
  return paths.size;
}
