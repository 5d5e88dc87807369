import { AvhError, NOTHING_CHANGED } from '../errors';
import { firstParent } from '../git/history';
import type { GitRepository } from '../git/repository';
import { blobOid } from '../git/worktreeUpdate';
import { REVERT_PREFIX } from '../domain/promptSummary';
import type { AttributionFactsSource } from './attributionFacts';
import { lineAt } from './attributionCache';
import { blobAt, blobHunks, isAncestor, reverseTurnTree, treeEntry, treeWithFile } from '../git/blameGit';
import {
  attributeFile,
  attributeWithAncestry,
  AttributionRefused,
  FileAttribution,
  LineRange,
  TurnAttribution,
} from './lineAttribution';

/**
 * Undo This Change (issue 26): the one hunk of a turn's own diff that holds a line, taken back three-way from the
 * current tree, keeping everything else (later turns, the user's commits, the rest of the turn). The tree only:
 * the `[Revert]` commit, the worktree update and the branch move are the restore saga's (scope 'file' with a change,
 * restorePlan.ts). Writes only objects and a temporary index of our own; refs, the index and files stay as they are.
 */

/**
 * One change of a turn, named in the turn's own commit (so it means the same whatever happened since): the
 * zero-context hunk of `commit`'s diff against `pre` (its attribution parent: the turn's base snapshot) whose new
 * side holds `line` of `path`. The restore saga persists it with the operation (operations.scope_change).
 */
export interface TurnChange {
  turnId: string;
  /** The turn's version (or its saved partial work, `[Interrupted]`). */
  commit: string;
  /** The file in `commit`, and the 1-based line there. */
  path: string;
  line: number;
  /** The commit the turn's change is against, and the file's path there (null: the turn created the file). */
  pre: string;
  prePath: string | null;
}

export interface TurnHunk {
  /** The lines the turn wrote in its commit (count 0: it only deleted lines) and those it replaced before it. */
  turnLines: { start: number; count: number };
  preLines: { start: number; count: number };
}

/** Later work over the same lines, as Undo This Change names it when it refuses. */
export interface Overlap {
  path: string;
  /** Lines in the current file (0 when the file conflicts as a whole). */
  start: number;
  end: number;
  /** Who wrote them: a later turn or a commit (by short id), or the user's uncommitted changes. */
  by: string[];
}

/**
 * Later work changed the lines the change wrote: named by file, lines and who (short commit ids, never a prompt or
 * a file's content). Nothing was changed.
 */
export class UndoChangeConflict extends AvhError {
  constructor(readonly overlaps: readonly Overlap[]) {
    const named = overlaps.map((o) => `${o.path}${o.start > 0 ? ` ${lineSpan(o)}` : ''}${byText(o)}`);
    super(
      'revert-conflict',
      `Undo This Change cannot apply cleanly: later work changed the same lines in ${named.join('; ')}.`,
      {
        count: overlaps.length,
        files: [...new Set(overlaps.map((o) => o.path))].join('\n'),
        lines: overlaps.map((o) => (o.start > 0 ? `${o.path}:${lineSpan(o)}` : o.path)).join('\n'),
      },
      { closing: `${NOTHING_CHANGED} Undo This File or Undo Only This Turn may still apply.` },
    );
    this.name = 'UndoChangeConflict';
  }
}

const lineSpan = (o: { start: number; end: number }) =>
  o.start === o.end ? `line ${o.start}` : `lines ${o.start}–${o.end}`;
const byText = (o: Overlap) => (o.by.length > 0 ? ` (${o.by.join(', ')})` : '');

/** The change of a turn that holds a line of a file in `ours` (and the attribution of that file), or a refusal. */
export interface ChangeAtLine {
  change: TurnChange;
  turn: TurnAttribution;
  attribution: FileAttribution;
}

/**
 * Which turn's change wrote 1-based `line` of `path` in commit `ours` (HEAD, or the working tree saved as a commit).
 * Refused ('not-a-turn-change') for a line no turn's version wrote, partial work that is not a version yet, or a
 * turn other than `expectedTurn` (the line changed since the user pointed at it). Read-only.
 */
export async function changeAtLine(request: {
  repo: GitRepository;
  facts: AttributionFactsSource;
  ours: string;
  path: string;
  line: number;
  expectedTurn?: string;
  /** `ours` is the working tree saved as a commit: its own lines are uncommitted (the user's, or partial work). */
  oursIsWorkingTree?: boolean;
}): Promise<ChangeAtLine> {
  const { repo } = request;
  const { attribution, ancestry } = await attributeWithAncestry({
    repo,
    path: request.path,
    rev: request.ours,
    facts: request.facts,
  });
  const range = lineAt(attribution, request.line);
  if (range && request.oursIsWorkingTree && range.commit === request.ours) throw partialWork();
  if (!range || !range.turn || !range.commit)
    throw new AttributionRefused(
      'not-a-turn-change',
      'No agent turn wrote this line, so there is no change of a turn to undo.',
    );
  if (request.expectedTurn !== undefined && range.turn.id !== request.expectedTurn)
    throw new AttributionRefused(
      'not-a-turn-change',
      'This line was changed since: another turn or edit wrote it now. Look at the line again, then try again.',
    );
  if (range.turn.via !== 'version' && range.turn.via !== 'interrupted') throw partialWork();
  const commit = range.commit;
  // The reverse merges with the turn's commit as base, so it must be in the current tree's own history.
  if (!(await isAncestor(repo, commit, request.ours)))
    throw new AttributionRefused(
      'not-a-turn-change',
      "This line came back from a version that is not in this branch's history; undo it there.",
    );
  // The turn's own change is against its attribution parent: its base snapshot (the last graft parent), else git's.
  const grafted = ancestry.grafts.get(commit);
  const pre = grafted ? grafted[grafted.length - 1] : await firstParent(repo, commit);
  const prePath =
    range.previous && (!grafted || range.previous.commit === pre) ? range.previous.path : range.origin.path;
  const preExists = pre !== '' && range.previous !== null && (await treeEntry(repo, pre, prePath)) !== null;
  return {
    change: {
      turnId: range.turn.id,
      commit,
      path: range.origin.path,
      line: range.origin.line + (request.line - range.start),
      pre,
      prePath: preExists ? prePath : null,
    },
    turn: range.turn,
    attribution,
  };
}

/** A line not in any version yet: the user's uncommitted edit, or a turn's partial work. */
export const partialWork = () =>
  new AttributionRefused(
    'not-a-turn-change',
    'This line is not in a version yet (an uncommitted edit, or partial work of a turn that is not a version yet), ' +
      'so there is no change of a turn to undo. Undo the turn to take its partial work back (it is saved first).',
  );

/** The tree of `ours` with the change taken back, and the files it conflicts in (never used then). Objects only. */
export interface ChangeTree {
  tree: string;
  conflicts: string[];
  hunk: TurnHunk;
}

/**
 * `ours` with `change` taken back: "theirs" is the turn's commit with the hunk reversed (a blob and a tree), merged
 * three-way with the turn's commit as base, as Undo Only This Turn merges. A file the turn created whose one hunk is
 * the whole file is removed. CRLF and a missing final newline are kept. Writes only objects.
 */
export async function changeTree(repo: GitRepository, change: TurnChange, ours: string): Promise<ChangeTree> {
  const [postEntry, preEntry] = await Promise.all([
    treeEntry(repo, change.commit, change.path),
    change.prePath === null ? Promise.resolve(null) : treeEntry(repo, change.pre, change.prePath),
  ]);
  if (!postEntry) throw new AttributionRefused('not-a-turn-change', `${change.path} is not in the turn's version.`);
  const [post, before] = await Promise.all([
    text(repo, change.commit, change.path, postEntry.oid),
    preEntry && change.prePath !== null ? text(repo, change.pre, change.prePath, preEntry.oid) : null,
  ]);
  const hunk = hunkHolding(preEntry ? await blobHunks(repo, preEntry.oid, postEntry.oid) : null, post, change.line);
  const postLines = splitLines(post);
  const preLines = before === null ? [] : splitLines(before);
  const replaced = [
    ...postLines.slice(0, hunk.turnLines.start - 1),
    ...preLines.slice(hunk.preLines.start - 1, hunk.preLines.start - 1 + hunk.preLines.count),
    ...postLines.slice(hunk.turnLines.start - 1 + hunk.turnLines.count),
  ].join('');
  const removes = before === null && replaced.length === 0;
  const theirs = await treeWithFile(
    repo,
    `${change.commit}^{tree}`,
    change.path,
    postEntry.mode,
    removes ? null : Buffer.from(replaced, 'utf8'),
  );
  const merged = await reverseTurnTree(repo, { version: change.commit, preTurn: theirs }, ours);
  return { tree: merged.tree, conflicts: merged.conflicts, hunk };
}

/** `[Revert] Undid a change of <path> of turn "<summary>"`. */
export function changeSubject(path: string, summary: string): string {
  return `${REVERT_PREFIX}Undid a change of ${oneLine(path)} of turn "${summary}"`;
}

/**
 * The refusal when the change does not apply cleanly on `ours`: the current lines later work wrote over the hunk
 * (the zero-context diff from the turn's file to the current one) and who wrote them (the attribution of `ours`).
 * `oursIsWorkingTree`: `ours` is the saved working tree, whose own lines are the user's uncommitted changes.
 */
export async function conflictOf(
  repo: GitRepository,
  facts: AttributionFactsSource,
  change: TurnChange,
  result: ChangeTree,
  ours: string,
  options: { oursIsWorkingTree?: boolean; attribution?: FileAttribution } = {},
): Promise<UndoChangeConflict> {
  const overlaps: Overlap[] = [];
  const current = result.conflicts.find((p) => p === (options.attribution?.path ?? change.path)) ?? null;
  const [oursEntry, postEntry] = current
    ? await Promise.all([treeEntry(repo, ours, current), treeEntry(repo, change.commit, change.path)])
    : [null, null];
  if (current && oursEntry && postEntry) {
    const attribution =
      options.attribution ?? (await attributeFile({ repo, path: current, rev: ours, facts }).catch(() => null));
    const first = result.hunk.turnLines.start;
    const last = result.hunk.turnLines.start + Math.max(result.hunk.turnLines.count, 1) - 1;
    for (const h of parseHunks(await blobHunks(repo, postEntry.oid, oursEntry.oid))) {
      const fromEnd = h.fromStart + Math.max(h.fromCount, 1) - 1;
      if (fromEnd < first - 1 || h.fromStart > last + 1) continue;
      // Lines deleted later are named by the line they were next to.
      const start = Math.max(h.toStart, 1);
      const end = h.toCount === 0 ? start : h.toStart + h.toCount - 1;
      const uncommitted = options.oursIsWorkingTree ? ours : null;
      overlaps.push({
        path: current,
        start,
        end,
        by: attribution ? authorsOf(attribution, start, end, change.commit, uncommitted) : [],
      });
    }
  }
  for (const file of result.conflicts)
    if (!overlaps.some((o) => o.path === file)) overlaps.push({ path: file, start: 0, end: 0, by: [] });
  return new UndoChangeConflict(overlaps);
}

/**
 * Undo This Change on its own (tests, and what planning does in two steps): the change holding `line` of `path` in
 * `ours`, and the tree with it taken back; refused with UndoChangeConflict when later work changed the same lines.
 */
export async function undoChangeTree(request: {
  repo: GitRepository;
  facts: AttributionFactsSource;
  ours: string;
  oursIsWorkingTree?: boolean;
  path: string;
  line: number;
}): Promise<ChangeAtLine & ChangeTree & { subject: string }> {
  const found = await changeAtLine(request);
  const result = await changeTree(request.repo, found.change, request.ours);
  if (result.conflicts.length > 0)
    throw await conflictOf(request.repo, request.facts, found.change, result, request.ours, {
      attribution: found.attribution,
      ...(request.oursIsWorkingTree ? { oursIsWorkingTree: true } : {}),
    });
  return { ...found, ...result, subject: changeSubject(found.change.path, found.turn.summary) };
}

/** The blob as text, refused when it is not UTF-8 that survives a round trip (git's output reaches us as text). */
async function text(repo: GitRepository, rev: string, file: string, oid: string): Promise<string> {
  const bytes = await blobAt(repo, rev, file);
  if (bytes === null || blobOid(bytes, repo.objectFormat ?? (oid.length === 64 ? 'sha256' : 'sha1')) !== oid)
    throw new AttributionRefused(
      'binary-file',
      `${file} is not UTF-8 text, so one change of it cannot be taken back alone. Undo This File still can.`,
    );
  return bytes.toString('utf8');
}

/** Lines with their line ends (the last may have none): putting lines back keeps CRLF and a missing final newline. */
export function splitLines(text: string): string[] {
  return text.match(/[^\n]*\n|[^\n]+$/g) ?? [];
}

const HUNK = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/;

function parseHunks(diff: string): { fromStart: number; fromCount: number; toStart: number; toCount: number }[] {
  return diff.split('\n').flatMap((header) => {
    const m = HUNK.exec(header);
    if (!m) return [];
    return [
      {
        fromStart: Number(m[1]),
        fromCount: m[2] === undefined ? 1 : Number(m[2]),
        toStart: Number(m[3]),
        toCount: m[4] === undefined ? 1 : Number(m[4]),
      },
    ];
  });
}

/**
 * The zero-context hunk of the turn's diff whose new side holds `line`. `diff` null: the turn created the file,
 * and its one hunk is the whole file.
 */
export function hunkHolding(diff: string | null, post: string, line: number): TurnHunk {
  if (diff === null)
    return { turnLines: { start: 1, count: splitLines(post).length }, preLines: { start: 1, count: 0 } };
  for (const h of parseHunks(diff)) {
    // A zero count names the line before the gap: the lines to put back start after it.
    const preStart = h.fromCount === 0 ? h.fromStart + 1 : h.fromStart;
    const postStart = h.toCount === 0 ? h.toStart + 1 : h.toStart;
    if (line >= postStart && line < postStart + h.toCount)
      return {
        turnLines: { start: postStart, count: h.toCount },
        preLines: { start: preStart, count: h.fromCount },
      };
  }
  throw new AttributionRefused('not-a-turn-change', 'That line is not part of a change the turn made.');
}

/** Who wrote lines `start`–`end` of the current file (not the turn's own commit), as the refusal names them. */
function authorsOf(
  attribution: FileAttribution,
  start: number,
  end: number,
  own: string,
  uncommitted: string | null,
): string[] {
  const names = new Set<string>();
  for (const r of attribution.ranges) {
    if (r.end < start || r.start > end || r.commit === own) continue;
    names.add(describe(r, uncommitted));
  }
  return [...names];
}

/** Content-free names: a prompt or a commit subject never goes into an error's text. */
function describe(r: LineRange, uncommitted: string | null): string {
  if (r.commit === null || r.commit === uncommitted) return 'your uncommitted changes';
  const short = r.commit.slice(0, 7);
  if (r.turn) return `a later agent turn, ${short}`;
  if (r.kind === 'pre-turn') return 'your edits saved when a turn began';
  return `commit ${short}`;
}

// eslint-disable-next-line no-control-regex -- a file name may hold control characters; a subject is one line
const oneLine = (file: string) => file.replace(/[\u0000-\u001f\u007f]/g, '?');
