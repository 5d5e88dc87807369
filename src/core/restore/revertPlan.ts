import * as fs from 'node:fs';
import * as path from 'node:path';
import type { RepoContext } from '../context';
import { AvhError, NOTHING_CHANGED } from '../errors';
import { revertConflictStatement } from './restoreCopy';
import { commitTreeOf, looseCommitParents } from '../git/looseObject';
import { ZERO_OID } from '../git/workingTree';
import {
  CommitRange,
  commitsSince,
  fileRestoredTree,
  mergeCommits,
  reverseTurnTree,
  workingTreeCommit,
} from '../git/reverseMerge';
import { type TreeChange, treeChanges } from '../git/worktreeUpdate';
import type { UndoScope } from '../store/schema';
import { agentSubject, kindOfSubject, REVERT_PREFIX } from '../domain/promptSummary';
import { openTurns, TurnRow } from '../turns/turnRecords';
import type { OperationRow } from '../operations/operationRecords';
import { turnsByIds } from './historyCounts';

/**
 * Undo Only This Turn and Undo This File (issue 12): what landed after a turn, and the tree an Undo of `scope`
 * commits. The saga (restoreSaga.ts) runs them exactly like every restore; only the commit's tree and subject differ.
 */

/**
 * What landed on the branch after the turn began, besides the turn itself: what Restore Everything would take away too.
 */
export interface LaterWork {
  /** Agent turns after this one that are still in effect (not undone), of other chats / of the same chat. */
  otherChatTurns: number;
  sameChatTurns: number;
  /** Commits the user made after the turn. */
  userCommits: number;
  /**
   * Turns (or files of turns) undone after this turn with Undo Only This Turn / Undo This File: Restore Everything
   * would bring them back.
   */
  reverts: number;
  /** Uncommitted edits in the working tree (not partial work of this turn). */
  uncommitted: boolean;
}

export const anyLaterWork = (l: LaterWork | null): boolean =>
  l !== null && (l.otherChatTurns + l.sameChatTurns + l.userCommits + l.reverts > 0 || l.uncommitted);

/**
 * What landed after `turn` on HEAD's history, or null when its own changes cannot be told apart from the rest: its
 * version is not in HEAD's history. A turn without a version (running, stopped, errored, or one whose version could
 * not be made) counts what landed since the HEAD it began on: Undo asks about it the same way. Read-only.
 */
export async function laterWorkAfter(
  ctx: RepoContext,
  turn: TurnRow,
  head: string,
  clean: boolean,
  listed: Promise<CommitRange> | null = laterCommits(ctx, turn, head),
): Promise<LaterWork | null> {
  if (!turn.base_commit) return null;
  const commits = listed === null ? [] : (await listed).commits;
  // One `log` answers both questions: what landed, and whether the version is in HEAD's history. It is exactly when
  // the range lists it: it is a descendant of every commit the range leaves out (the HEAD the turn began on was
  // there before it; `X^@` are its own parents).
  const version = turn.version_commit;
  if (version !== null && head !== version && !commits.some((c) => c.oid === version)) return null;
  const laterTurns = commits
    .filter((c) => kindOfSubject(c.subject) === 'agent' && c.turn && c.turn !== turn.id)
    .map((c) => c.turn);
  const inEffect = (await turnsByIds(ctx, laterTurns)).filter((t) => t.undone_by === null);
  return {
    otherChatTurns: inEffect.filter((t) => t.chat_id !== turn.chat_id).length,
    sameChatTurns: inEffect.filter((t) => t.chat_id === turn.chat_id).length,
    userCommits: commits.filter((c) => kindOfSubject(c.subject) === 'user').length,
    reverts: commits.filter((c) => c.subject.startsWith(REVERT_PREFIX)).length,
    uncommitted: !clean,
  };
}

/**
 * The commits that landed after `turn` began (`git log` from the HEAD it began on; a commit the user made while the
 * turn ran counts too: Restore Everything undoes it), started once so the later-work count and the reverse share
 * it. Null when git need not be asked: HEAD is still the version and its one parent is the HEAD the turn began on,
 * so the range holds only the turn's own version (the parent is read from the fresh loose commit object).
 */
export function laterCommits(ctx: RepoContext, turn: TurnRow, head: string): Promise<CommitRange> | null {
  if (!turn.base_commit) return null;
  if (!turn.version_commit) {
    // No version: everything on HEAD's history since the HEAD the turn began on (none when HEAD is still there).
    if (turn.base_head === head) return null;
    return commitsSince(ctx.repo, turn.base_head === null || turn.base_head === ZERO_OID ? null : turn.base_head, head);
  }
  const since = turn.base_head === ZERO_OID ? null : (turn.base_head ?? `${turn.version_commit}^@`);
  const onlyOwnVersion =
    head === turn.version_commit &&
    since !== null &&
    !since.endsWith('^@') &&
    sameOids(looseCommitParents(ctx.repo, head), [since]);
  return onlyOwnVersion ? null : commitsSince(ctx.repo, since, head);
}

function sameOids(a: readonly string[] | null, b: readonly string[]): boolean {
  return a !== null && a.length === b.length && a.every((oid, i) => oid === b[i]);
}

/** "3 turns of other chats, 1 of your commits and your uncommitted changes" (empty when nothing). */
export function describeLaterWork(l: LaterWork): string {
  const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;
  const parts = [
    ...(l.otherChatTurns > 0 ? [plural(l.otherChatTurns, 'turn of another chat', 'turns of other chats')] : []),
    ...(l.sameChatTurns > 0
      ? [plural(l.sameChatTurns, 'later turn of the same chat', 'later turns of the same chat')]
      : []),
    ...(l.userCommits > 0 ? [plural(l.userCommits, 'of your commits', 'of your commits')] : []),
    ...(l.reverts > 0
      ? [
          plural(
            l.reverts,
            'later undo of another turn (it would come back)',
            'later undos of other turns (they would come back)',
          ),
        ]
      : []),
    ...(l.uncommitted ? ['your uncommitted changes'] : []),
  ];
  return parts.length <= 1 ? parts.join('') : `${parts.slice(0, -1).join(', ')} and ${parts[parts.length - 1]}`;
}

/** The tree an Undo of `scope` commits on top of `ours`, and the files a reverse of the turn conflicts in. */
export interface UndoTree {
  tree: string;
  conflicts: string[];
  /** Checked ahead (checkUndoTree): the reverse leaves the tree it starts from (HEAD, or the saved edits) as it is. */
  unchanged?: boolean;
}

/**
 * The tree of an Undo that keeps later work: the turn's changes (or one path of them) taken back from `ours`.
 * Writes only objects. `ours` is a commit: HEAD, the saved working tree, or the preservation commit;
 * `oursInIndex`: the repository's index holds exactly `ours` (a clean tree at HEAD).
 */
export async function undoTree(
  ctx: RepoContext,
  turn: TurnRow,
  scope: Exclude<UndoScope, 'everything'>,
  ours: string,
  file: string | null,
  oursInIndex = false,
  listed: Promise<CommitRange> | null = null,
): Promise<UndoTree> {
  const { version } = turnCommits(turn);
  const preTurn = await preTurnTree(ctx, turn, listed);
  if (scope === 'file')
    return { tree: await fileRestoredTree(ctx.repo, oursInIndex ? null : ours, preTurn, file!), conflicts: [] };
  return reverseTurnTree(ctx.repo, { version, preTurn }, ours);
}

/**
 * The tree the turn's own changes start from, as seen from its version's parent: the turn's base snapshot plus
 * any commit the user made while the turn ran (those are theirs, not the turn's). A turn that began on a clean
 * tree: the version's parent itself. One that began dirty: its snapshot merged with that parent (the snapshot
 * alone when they conflict). Objects only.
 */
async function preTurnTree(
  ctx: RepoContext,
  turn: TurnRow,
  listed: Promise<CommitRange> | null = null,
): Promise<string> {
  const { version, base } = turnCommits(turn);
  if (turn.base_head === null || base === turn.base_head) {
    // The range of later commits lists the version with its parents, and the tree of the one it stops at: the oid
    // lets the synthetic merge input be written without git (reverseTurnTree).
    const range = listed === null ? null : await listed;
    const parents = range?.commits.find((c) => c.oid === version)?.parents;
    const tree = parents?.length === 1 ? range!.trees.get(parents[0]) : undefined;
    return tree ?? `${version}^^{tree}`;
  }
  const merged = await mergeCommits(ctx.repo, base, `${version}^`);
  return merged.conflicts.length === 0 ? merged.tree : `${base}^{tree}`;
}

/**
 * The same tree checked before anything moves: `ours` is HEAD, or (uncommitted edits) the working tree saved as
 * an object on no ref. Refuses what cannot be done as an ordinary failure that changed nothing.
 */
export async function checkUndoTree(
  ctx: RepoContext,
  turn: TurnRow,
  scope: Exclude<UndoScope, 'everything'>,
  head: string,
  clean: boolean,
  file: string | null,
): Promise<UndoTree> {
  await refuseWhileAnotherTurnRuns(ctx, turn, clean);
  if (scope === 'file') {
    const changed = await assertTurnChanged(ctx, turn, file);
    refuseShapeChange(ctx.repo.root, changed, file!);
    // Putting one path back cannot conflict; with uncommitted edits the tree is made again once they are saved, but
    // made here too, so a path already as it was before the turn is told apart (nothing to do, nothing saved).
  }
  const ours = clean ? head : await workingTreeCommit(ctx.repo, head);
  const undo = await undoTree(ctx, turn, scope, ours, file, clean);
  return { ...undo, unchanged: undo.conflicts.length === 0 && undo.tree === (await commitTreeOf(ctx.repo, ours)) };
}

/**
 * An Undo that keeps later work saves uncommitted edits first; while another turn runs they may be its partial work,
 * which that turn's version would then take for its own: refused (nothing changed) until it ends.
 */
export async function refuseWhileAnotherTurnRuns(ctx: RepoContext, turn: TurnRow, clean: boolean): Promise<void> {
  if (clean) return;
  const running = await ctx.store.read((r) => openTurns(r).filter((t) => t.id !== turn.id));
  if (running.length > 0) {
    throw new AvhError(
      'dirty-conflict',
      'Another agent turn is still running and the working tree has uncommitted changes. Wait for it to end, ' +
        'then try again.',
      {},
      { closing: NOTHING_CHANGED },
    );
  }
}

/**
 * Undo This File takes a path the turn changed (as its multi-file diff shows it); anything else is refused. Returns
 * the turn's changes (pre-turn tree to version).
 */
async function assertTurnChanged(ctx: RepoContext, turn: TurnRow, file: string | null): Promise<TreeChange[]> {
  const { version } = turnCommits(turn);
  if (typeof file !== 'string' || file.length === 0 || file.length > 4096 || file.includes('\0')) {
    throw new AvhError('invalid-input', 'Undo This File needs the path of a file the turn changed.');
  }
  const changed = await treeChanges(ctx.repo, await preTurnTree(ctx, turn), version);
  if (!changed.some((c) => c.path === file)) {
    throw new AvhError(
      'invalid-input',
      'This turn did not change that file, so there is nothing of it to undo.',
      {},
      { closing: NOTHING_CHANGED },
    );
  }
  return changed;
}

/**
 * Undo This File puts back one path and touches no other (docs/design/undo-only-this-turn.md, "Undo This File").
 * What cannot be done that way is refused here, before anything is saved or moved: a folder now where the path goes
 * (putting the file back, or taking away the one the turn added, would delete what is in it), or a file or link where
 * one of its parent folders goes (putting the file back would delete that file). The working tree is what the Undo
 * builds on (its uncommitted edits are saved first), so it is read from disk; an empty folder is no obstacle (git
 * keeps none, and the update replaces it). Which message: whether the turn itself made the change (its own diff),
 * or it came after the turn. Every other kind of change (contents, mode, file↔link, added, deleted, a folder the
 * turn made a file, once that file is back out of the way) is put back exactly.
 */
export function refuseShapeChange(root: string, changed: readonly TreeChange[], file: string): void {
  const own = changed.find((c) => c.path === file)!;
  const block = shapeBlock(root, file, own.oldOid !== null);
  if (block === null) return;
  const undoOf = (p: string) => `Undo This File of ${p}`;
  const message =
    block.kind === 'folder'
      ? changed.some((c) => c.path.startsWith(`${file}/`) && c.oid !== null)
        ? `This turn made ${file} a folder, so its file cannot be put back without deleting what the folder holds. ` +
          `Undo the files the turn put in it first (${undoOf('each')}, or Undo Only This Turn), then ${file}.`
        : `${file} has been made a folder since this turn, so Undo This File cannot put it back without deleting ` +
          'what the folder holds. Move that folder away first.'
      : changed.some((c) => c.path === block.path && c.oid !== null)
        ? `This turn made ${block.path} a file where a folder was, so ${file} cannot be put back inside it without ` +
          `deleting that file. ${undoOf(block.path)} first, then ${file}.`
        : `${block.path} has been made a file (it was a folder) since this turn, so ${file} cannot be put back ` +
          `inside it without deleting that file. Move ${block.path} away first.`;
  throw new AvhError('revert-conflict', message, { files: file }, { closing: NOTHING_CHANGED });
}

/**
 * What stands in the way of putting `file` back on disk (`restoring`: a file goes there; else the turn's file is
 * taken away): a folder with anything in it at the path, or (restoring) a file or link at one of its parent folders.
 */
function shapeBlock(root: string, file: string, restoring: boolean): { kind: 'folder' | 'file'; path: string } | null {
  const stat = (p: string) => {
    try {
      return fs.lstatSync(path.join(root, p));
    } catch {
      return null;
    }
  };
  if (restoring) {
    const parts = file.split('/');
    for (let i = 1; i < parts.length; i++) {
      const parent = parts.slice(0, i).join('/');
      const s = stat(parent);
      if (s === null) break;
      if (!s.isDirectory()) return { kind: 'file', path: parent };
    }
  }
  return stat(file)?.isDirectory() && !emptyFolder(path.join(root, file)) ? { kind: 'folder', path: file } : null;
}

/** A folder holding nothing but (nested) empty folders. */
function emptyFolder(dir: string): boolean {
  try {
    return fs
      .readdirSync(dir, { withFileTypes: true })
      .every((e) => e.isDirectory() && emptyFolder(path.join(dir, e.name)));
  } catch {
    return false;
  }
}

/** Refusal when the reverse does not apply cleanly: names the files, changes nothing, and points to the other way. */
export function conflictError(conflicts: readonly string[]): AvhError {
  return new AvhError(
    'revert-conflict',
    revertConflictStatement(conflicts),
    { count: conflicts.length, files: conflicts.join('\n') },
    { closing: `${NOTHING_CHANGED} Restore Everything to Before This Turn is still available.` },
  );
}

function turnCommits(turn: TurnRow): { version: string; base: string } {
  if (!turn.version_commit || !turn.base_commit) {
    throw new AvhError(
      'invalid-input',
      'This turn made no version of its own, so only Restore Everything to Before This Turn can undo it.',
    );
  }
  return { version: turn.version_commit, base: turn.base_commit };
}

/** `[Revert] Undid turn "<summary>"`, or for one file `[Revert] Undid <path> of turn "<summary>"`. */
export function revertSubject(turn: TurnRow, op: Pick<OperationRow, 'scope' | 'scope_path'>): string {
  const summary = agentSubject(turn.prompt).slice('[Agent] '.length);
  // eslint-disable-next-line no-control-regex -- a file name may hold control characters; a subject is one line
  const file = (op.scope_path ?? '').replace(/[\u0000-\u001f\u007f]/g, '?');
  return op.scope === 'file'
    ? `${REVERT_PREFIX}Undid ${file} of turn "${summary}"`
    : `${REVERT_PREFIX}Undid turn "${summary}"`;
}
