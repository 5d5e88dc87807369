import type { AttributionFacts, OperationFact, TurnFact } from './attributionFacts';

/**
 * The history attribution walks, as git blame's `-S` graft lines ("<commit> <parent>…", each replacing that
 * commit's parents; commits not listed keep their own). Our commits' git parents say when they were made, not
 * where their content came from:
 * - an `[Agent]` (or `[Interrupted]`) commit's parent is HEAD, so its diff holds the user's uncommitted pre-turn
 *   edits too: its parent becomes the turn's base snapshot (plus its real parent when HEAD moved during the turn);
 * - a `[Restore]` commit's tree is an earlier version's: its parent becomes that version, so what it brings back is
 *   credited to whoever wrote it, and what it removed is nobody's;
 * - a `[Revert]` (Undo Only This Turn / This File) is a three-way reverse: its parents become its real parent and
 *   the undone turn's base snapshot, so what it puts back is credited to the pre-turn authors;
 * - a base snapshot taken on top of a stopped turn's partial work: its parent becomes that turn's base snapshot, and
 *   its own lines are that turn's (a cancelled turn's partial work stays its own, docs/product-contract.md §5.1).
 * Pure: git parents come in through `parentsOf`.
 */

export type CommitOwner =
  /** The commit holds a turn's own lines: its version, its saved partial work, or a snapshot of its partial work. */
  | { kind: 'turn'; turnId: string; via: 'version' | 'interrupted' | 'partial' }
  /** A base snapshot: the user's uncommitted edits when the turn began. */
  | { kind: 'pre-turn'; turnId: string };

export interface Ancestry {
  grafts: ReadonlyMap<string, readonly string[]>;
  owners: ReadonlyMap<string, CommitOwner>;
}

const began = (t: TurnFact): t is TurnFact & { baseCommit: string } => t.baseCommit !== null;
/** The turn began over uncommitted edits: its base snapshot is a commit of its own on top of baseHead. */
const dirtyStart = (t: TurnFact) => t.baseCommit !== null && t.baseHead !== null && t.baseCommit !== t.baseHead;
const stopped = (t: TurnFact) => t.running || t.outcome === 'cancelled' || t.outcome === 'errored';
/** A turn's work only in the working tree (and later base snapshots): running, or stopped without a version. */
export const unsavedWork = (t: TurnFact) => t.versionCommit === null && !t.undone && stopped(t);

/** The commits whose git parents buildAncestry needs: versions of turns that began over uncommitted edits. */
export function commitsNeedingParents(facts: AttributionFacts): string[] {
  return facts.turns.filter((t) => dirtyStart(t) && t.versionCommit !== null).map((t) => t.versionCommit!);
}

export function buildAncestry(
  facts: AttributionFacts,
  parentsOf: (commit: string) => readonly string[] | undefined,
): Ancestry {
  const grafts = new Map<string, readonly string[]>();
  const owners = new Map<string, CommitOwner>();
  const graft = (commit: string, parents: readonly string[]) => {
    const distinct = [...new Set(parents)].filter((p) => p !== commit);
    if (distinct.length > 0) grafts.set(commit, distinct);
  };
  const turns = new Map(facts.turns.map((t) => [t.id, t]));
  /** A turn commit whose git parent is `parent`: walk its base snapshot instead (and `parent` if HEAD moved). */
  const turnCommit = (turn: TurnFact, commit: string, parent: string | undefined) => {
    if (!dirtyStart(turn)) return;
    graft(commit, parent === undefined || parent === turn.baseHead ? [turn.baseCommit!] : [parent, turn.baseCommit!]);
  };

  for (const turn of facts.turns) {
    if (dirtyStart(turn)) owners.set(turn.baseCommit!, { kind: 'pre-turn', turnId: turn.id });
    if (turn.versionCommit) {
      owners.set(turn.versionCommit, { kind: 'turn', turnId: turn.id, via: 'version' });
      turnCommit(turn, turn.versionCommit, parentsOf(turn.versionCommit)?.[0]);
    }
  }

  // Base snapshots taken over the partial work of the turn just before on the same branch and HEAD.
  const byBranch = new Map<string, TurnFact[]>();
  for (const turn of facts.turns.filter(began)) {
    const key = turn.branch ?? '';
    byBranch.set(key, [...(byBranch.get(key) ?? []), turn]);
  }
  for (const list of byBranch.values()) {
    for (let k = 1; k < list.length; k++) {
      const [before, turn] = [list[k - 1], list[k]];
      if (!dirtyStart(turn) || before.baseHead !== turn.baseHead || before.versionCommit !== null || before.undone)
        continue;
      if (dirtyStart(before)) graft(turn.baseCommit!, [before.baseCommit!]);
      if (stopped(before)) owners.set(turn.baseCommit!, { kind: 'turn', turnId: before.id, via: 'partial' });
    }
  }

  for (const op of facts.operations) restoreAncestry(op, turns, graft, owners, turnCommit);
  return { grafts, owners };
}

function restoreAncestry(
  op: OperationFact,
  turns: ReadonlyMap<string, TurnFact>,
  graft: (commit: string, parents: readonly string[]) => void,
  owners: Map<string, CommitOwner>,
  turnCommit: (turn: TurnFact, commit: string, parent: string | undefined) => void,
): void {
  const turn = op.turnId ? turns.get(op.turnId) : undefined;
  // An Undo of everything saves a cancelled turn's partial work first: that commit is the turn's (an Undo that keeps
  // later work saves the user's own edits instead, with no Agent-Turn: those stay the user's).
  if (op.preserveCommit && op.scope === 'everything' && turn) {
    owners.set(op.preserveCommit, { kind: 'turn', turnId: turn.id, via: 'interrupted' });
    turnCommit(turn, op.preserveCommit, op.sourceHead);
  }
  if (!op.restoreCommit) return;
  if (op.scope === 'everything') graft(op.restoreCommit, [op.target]);
  else graft(op.restoreCommit, [op.preserveCommit ?? op.sourceHead, op.target]);
}

/** The graft file's text: one line per re-parented commit, sorted (the same facts always make the same file). */
export function graftLines(ancestry: Ancestry): string {
  return [...ancestry.grafts]
    .map(([commit, parents]) => `${commit} ${parents.join(' ')}\n`)
    .sort()
    .join('');
}
