import * as fs from 'node:fs';
import * as path from 'node:path';
import { AvhError } from '../errors';
import { guessBranchTip, readSymbolicHead } from '../git/healthProbe';
import type { GitRepository } from '../git/repository';
import type { TerminalOutcome } from '../outcomes';
import { kindOfSubject } from '../domain/promptSummary';
import { Ancestry, buildAncestry, commitsNeedingParents, graftLines, unsavedWork } from './ancestry';
import type { AttributionFacts, AttributionFactsSource, TurnFact } from './attributionFacts';
import {
  ancestryFile,
  BlameGitFailure,
  blameIncremental,
  commitAndBlob,
  commitParents,
  readHead,
  turnTrailers,
} from '../git/blameGit';
import { BlameGroup, parseIncremental } from './blamePorcelain';

/**
 * Which turn wrote each line of a file (issue 26): git blame walking our ancestry (ancestry.ts) instead of the
 * commits' own parents, so the user's pre-turn edits stay the user's, what a restore brings back keeps its
 * author, and what was undone is nobody's. Read-only: never touches refs, the index or the working tree.
 */

export interface TurnAttribution {
  id: string;
  chatId: string;
  chatTitle: string | null;
  agent: string | null;
  /** The prompt's first line (the `[Agent]` subject); never the whole prompt. */
  summary: string;
  /** Milliseconds since the epoch (null when only a commit trailer names the turn). */
  startedAt: number | null;
  endedAt: number | null;
  outcome: TerminalOutcome | null;
  running: boolean;
  undone: boolean;
  /** How the lines are the turn's: its version commit, its saved partial work, or partial work not yet a version. */
  via: 'version' | 'interrupted' | 'partial' | 'uncommitted';
}

export type LineKind =
  /** An agent turn's lines. */
  | 'turn'
  /** A commit no turn made (the user's, or one of ours such as `[Recovery]`): its author as git says. */
  | 'commit'
  /** The user's uncommitted edits captured when a turn began (its base snapshot). */
  | 'pre-turn'
  /** Not committed anywhere yet, and no turn is writing them: the user's. */
  | 'uncommitted';

export interface LineRange {
  /** 1-based, inclusive, in the file attributed. */
  start: number;
  end: number;
  kind: LineKind;
  turn: TurnAttribution | null;
  /** The commit that wrote the lines (null for uncommitted lines). */
  commit: string | null;
  /** As git says ('' for uncommitted lines). */
  author: string;
  authorMail: string;
  /** The commit's author time, seconds since the epoch (now for uncommitted lines). */
  time: number;
  /** The commit's subject ('' for uncommitted lines). */
  subject: string;
  /** Where the first line of the range is in `commit` (path as of that commit: renames followed). */
  origin: { path: string; line: number };
  /** Where blame looked before `commit` (its attribution parent and the path there). */
  previous: { commit: string; path: string } | null;
  /** The walk ended at `commit` (a root, or a shallow end): the lines may be older than it says. */
  boundary: boolean;
}

export interface FileAttribution {
  /** Repository-relative, as asked for. */
  path: string;
  /** The commit attributed, or null for the working tree copy. */
  rev: string | null;
  lineCount: number;
  eol: 'lf' | 'crlf' | 'mixed' | 'none';
  ranges: LineRange[];
  /** The turn writing the uncommitted lines right now (or whose stopped partial work they are), if any. */
  uncommittedTurn: string | null;
}

export interface AttributeRequest {
  repo: GitRepository;
  /** Repository-relative (forward slashes), or absolute inside the repository. */
  path: string;
  /** Attribute the file as it is in this commit; absent: the working tree copy (or `contents`). */
  rev?: string;
  /** An editor's unsaved text of the file (working tree mode only). */
  contents?: string | Buffer;
  facts: AttributionFactsSource;
  /** Aborting kills the blame (the editor changed before it finished); the promise rejects with 'cancelled'. */
  signal?: AbortSignal;
}

/** Why attribution was refused (each an ErrorReason of its own); nothing was changed. */
export type RefusalReason = 'binary-file' | 'no-such-file' | 'outside-repository' | 'unknown-revision';

/** Attribution refused: the reason says which, the message says it to the user. Changes nothing. */
export class AttributionRefused extends AvhError {
  constructor(
    override readonly reason: RefusalReason | 'not-a-turn-change',
    message: string,
  ) {
    super(reason, message);
    this.name = 'AttributionRefused';
  }
}

const ZERO = /^0{40}(?:0{24})?$/;
/** git's own test for binary content: a NUL byte in the first 8,000 bytes. */
const BINARY_PROBE = 8000;

/**
 * Line ranges of `path` with the turn that wrote each (or the commit and author, for lines no turn wrote). Binary
 * files are refused; CRLF files are attributed like any other (git compares them as stored). Read-only.
 */
export async function attributeFile(request: AttributeRequest): Promise<FileAttribution> {
  return (await attributeWithAncestry(request)).attribution;
}

/** attributeFile, with the ancestry it walked (Undo This Change reads a turn commit's attribution parents from it). */
export async function attributeWithAncestry(
  request: AttributeRequest,
): Promise<{ attribution: FileAttribution; ancestry: Ancestry }> {
  const { repo } = request;
  const file = repositoryPath(repo, request.path);
  // The revision is named without our ancestry: under blame's -S, `HEAD^` would mean HEAD's graft parent.
  const [facts, { content, rev }] = await Promise.all([request.facts.read(), fileContent(request, file)]);
  const owner = request.rev === undefined ? await uncommittedOwner(repo, facts) : null;
  const parents = await commitParents(repo, commitsNeedingParents(facts));
  const ancestry = buildAncestry(facts, (c) => parents.get(c));
  const graftFile = ancestryFile(repo, graftLines(ancestry));
  let groups: BlameGroup[];
  let commits: ReturnType<typeof parseIncremental>['commits'];
  try {
    ({ groups, commits } = parseIncremental(
      await blameIncremental(
        repo,
        file,
        {
          ancestryFile: graftFile,
          ...(rev !== undefined ? { rev } : { contents: content }),
          ...(owner?.parents ? { parents: owner.parents } : {}),
        },
        request.signal,
      ),
    ));
  } catch (error) {
    if (!(error instanceof BlameGitFailure)) throw error;
    if (error.failure === 'no-such-revision')
      throw new AttributionRefused('unknown-revision', 'That version is not a commit in this repository.');
    // Only in the working tree (new, untracked, or created by the running turn): every line is uncommitted.
    ({ groups, commits } = { groups: uncommittedGroups(file, content), commits: new Map() });
  }
  const lineCount = countLines(content);
  const turns = new Map(facts.turns.map((t) => [t.id, t]));
  const trailers = await unknownTurnCommits(repo, groups, commits, ancestry);
  const ranges = groups.map((g): LineRange => {
    const info = commits.get(g.commit);
    const base = {
      start: g.finalLine,
      end: g.finalLine + g.count - 1,
      origin: { path: g.path, line: g.origLine },
      previous: g.previous,
      boundary: info?.boundary ?? false,
    };
    if (ZERO.test(g.commit)) {
      const turn = owner?.turn ? turnOf(owner.turn, 'uncommitted') : null;
      return {
        ...base,
        kind: turn ? 'turn' : 'uncommitted',
        turn,
        commit: null,
        author: '',
        authorMail: '',
        time: info?.authorTime ?? Math.floor(Date.now() / 1000),
        subject: '',
        previous: null,
      };
    }
    const byGit = {
      ...base,
      commit: g.commit,
      author: info?.author ?? '',
      authorMail: info?.authorMail ?? '',
      time: info?.authorTime ?? 0,
      subject: info?.summary ?? '',
    };
    const known = ancestry.owners.get(g.commit);
    if (known?.kind === 'pre-turn') return { ...byGit, kind: 'pre-turn', turn: null };
    const turnFact = known ? turns.get(known.turnId) : undefined;
    if (known && turnFact) return { ...byGit, kind: 'turn', turn: turnOf(turnFact, known.via) };
    const trailer = trailers.get(g.commit);
    if (trailer) {
      const fact = turns.get(trailer.turnId);
      const via = kindOfSubject(byGit.subject) === 'interrupted' ? 'interrupted' : 'version';
      const turn = fact ? turnOf(fact, via) : trailerTurn(trailer, byGit.subject, via);
      return { ...byGit, kind: 'turn', turn };
    }
    return { ...byGit, kind: 'commit', turn: null };
  });
  const attribution: FileAttribution = {
    path: file,
    rev: rev ?? null,
    lineCount,
    eol: eolOf(content),
    ranges,
    uncommittedTurn: owner?.turn?.id ?? null,
  };
  return { attribution, ancestry };
}

/** The path as git names it: relative to the repository root, forward slashes; refused when outside. */
export function repositoryPath(repo: GitRepository, file: string): string {
  const absolute = path.resolve(repo.root, file);
  const rel = path.relative(repo.root, absolute);
  if (rel === '' || rel.startsWith('..') || path.isAbsolute(rel))
    throw new AttributionRefused('outside-repository', 'That file is not inside this repository.');
  return rel.split(path.sep).join('/');
}

/** The bytes attributed (the editor's text, the working tree file, or the commit's blob), refused when binary. */
async function fileContent(request: AttributeRequest, file: string): Promise<{ content: Buffer; rev?: string }> {
  let content: Buffer | null;
  let rev: string | undefined;
  if (request.rev !== undefined) {
    const found = await commitAndBlob(request.repo, request.rev, file);
    if (found.commit === null)
      throw new AttributionRefused('unknown-revision', 'That version is not a commit in this repository.');
    if (found.blob === null) throw new AttributionRefused('no-such-file', `${file} is not in that version.`);
    rev = found.commit;
    content = found.blob;
  } else if (request.contents !== undefined) {
    content = Buffer.isBuffer(request.contents) ? request.contents : Buffer.from(request.contents, 'utf8');
  } else {
    try {
      content = fs.readFileSync(path.join(request.repo.root, file));
    } catch {
      throw new AttributionRefused('no-such-file', `${file} does not exist in the working tree.`);
    }
  }
  if (content.subarray(0, BINARY_PROBE).includes(0))
    throw new AttributionRefused(
      'binary-file',
      `${file} is a binary file: Version History attributes lines of text files only.`,
    );
  return { content, ...(rev ? { rev } : {}) };
}

interface UncommittedOwner {
  turn: TurnFact | null;
  /** The commits the working tree copy is on top of, when not HEAD (see BlameRun.parents). */
  parents: string[] | null;
}

/**
 * Whose the uncommitted lines are: the running turn's, else the stopped turn's whose partial work is still in the
 * tree (no version, not undone, began on this HEAD), else the user's. They are attributed from the newest base
 * snapshot taken on this HEAD, so the user's edits made before that turn began stay the user's.
 */
async function uncommittedOwner(repo: GitRepository, facts: AttributionFacts): Promise<UncommittedOwner | null> {
  const pending = facts.turns.filter((t) => t.versionCommit === null && !t.undone && t.baseCommit !== null);
  if (pending.length === 0) return null; // the usual case: no git, no file read
  const branch = readSymbolicHead(repo.gitDir)?.slice('refs/heads/'.length) ?? null;
  const guess = guessBranchTip(repo.gitDir);
  const head = guess ? guess.head : await readHead(repo);
  const mine = pending.filter((t) => branch === null || t.branch === branch).reverse(); // newest first
  // A running turn owns what is uncommitted even when HEAD moved under it (the user committed meanwhile).
  const running = mine.find((t) => t.running);
  if (running) {
    const parents =
      running.baseCommit === head ? null : [running.baseCommit!, ...(head && running.baseHead !== head ? [head] : [])];
    return { turn: running, parents };
  }
  let turn: TurnFact | null = null;
  let base: string | null = null;
  for (const t of mine) {
    if (t.baseHead !== head) continue;
    base ??= t.baseCommit;
    if (unsavedWork(t)) {
      turn = t;
      break;
    }
    // A turn that changed nothing and began on a clean tree: nothing older is still uncommitted.
    if (t.baseCommit === t.baseHead) break;
  }
  return { turn, parents: base && base !== head ? [base] : null };
}

/** Commits that look like our turn commits but our records do not name (a rebuilt state): their trailers say whose. */
async function unknownTurnCommits(
  repo: GitRepository,
  groups: readonly BlameGroup[],
  commits: ReturnType<typeof parseIncremental>['commits'],
  ancestry: Ancestry,
): Promise<Map<string, { turnId: string; chatId: string }>> {
  const unknown = [...new Set(groups.map((g) => g.commit))].filter((c) => {
    const kind = kindOfSubject(commits.get(c)?.summary ?? '');
    return !ancestry.owners.has(c) && (kind === 'agent' || kind === 'interrupted');
  });
  return turnTrailers(repo, unknown);
}

function turnOf(t: TurnFact, via: TurnAttribution['via']): TurnAttribution {
  return {
    id: t.id,
    chatId: t.chatId,
    chatTitle: t.chatTitle,
    agent: t.agent,
    summary: t.summary,
    startedAt: t.startedAt,
    endedAt: t.endedAt,
    outcome: t.outcome,
    running: t.running,
    undone: t.undone,
    via,
  };
}

function trailerTurn(
  trailer: { turnId: string; chatId: string },
  subject: string,
  via: TurnAttribution['via'],
): TurnAttribution {
  return {
    id: trailer.turnId,
    chatId: trailer.chatId,
    chatTitle: null,
    agent: null,
    summary: subject.replace(/^\[\w+\] /, ''),
    startedAt: null,
    endedAt: null,
    outcome: null,
    running: false,
    undone: false,
    via,
  };
}

function uncommittedGroups(file: string, content: Buffer): BlameGroup[] {
  const count = countLines(content);
  if (count === 0) return [];
  return [{ commit: '0'.repeat(40), origLine: 1, finalLine: 1, count, path: file, previous: null }];
}

export function countLines(content: Buffer): number {
  if (content.length === 0) return 0;
  let lines = 0;
  for (let i = content.indexOf(10); i >= 0; i = content.indexOf(10, i + 1)) lines++;
  return content[content.length - 1] === 10 ? lines : lines + 1;
}

function eolOf(content: Buffer): FileAttribution['eol'] {
  let lf = 0;
  let crlf = 0;
  for (let i = content.indexOf(10); i >= 0; i = content.indexOf(10, i + 1)) {
    if (i > 0 && content[i - 1] === 13) crlf++;
    else lf++;
  }
  return lf + crlf === 0 ? 'none' : crlf === 0 ? 'lf' : lf === 0 ? 'crlf' : 'mixed';
}
