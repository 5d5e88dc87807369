/**
 * Git-side benchmarks for issues 2 and 3: the `[Agent]` version commit, the base snapshot, simple-git vs our
 * spawn wrapper, Undo/Redo end to end, and the health probe, each against raw git measured alternately in the
 * same loop on the same repository. Returns markdown sections plus rows for the goals table.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { simpleGit } from 'simple-git';
import { inspectRepositoryHealth, PROBE_STATUS_ARGS } from '../src/core/git/healthProbe';
import { runGit } from '../src/core/git/gitRunner';
import { TemporaryIndex } from '../src/core/git/workingTree';
import { VersionHistory } from '../src/core/versionHistory';
import {
  assertClean,
  BenchRepo,
  buildRepo,
  fmtRatio,
  git,
  CoreTrace,
  GitCall,
  gitWallMs,
  GitProcessCounter,
  headOf,
  spawnProbe,
  median,
  modifyFiles,
  ms,
  now,
  percentile,
  pickFiles,
  resetTo,
  timed,
  traceGitCalls,
  TraceableStore,
  unionMs,
  verb,
} from './benchUtil';
import { contextOf } from '../src/core/repoContextOf';

const storeOf = (history: VersionHistory) => contextOf(history).store as unknown as TraceableStore;

import type { GoalRow } from './benchSection';

export type { GoalRow } from './benchSection';

/** The parts of the git section AVH_BENCH_ONLY can run alone, on the medium repository. */
export const GIT_PARTS: readonly string[] = ['undo', 'revert', 'health'];

export interface GitBenchOptions {
  workDir: string;
  progress: (line: string) => void;
  /** Small repositories and few repetitions, for developing the bench itself. */
  quick: boolean;
  /** Only these sections ('undo', 'revert', 'health') on the medium repository. */
  only?: readonly string[];
}

export interface GitBenchResult {
  sections: string[];
  goals: GoalRow[];
}

const CHAT = 'bench-chat';

interface Sizes {
  mediumFiles: number;
  largeFiles: number;
  fileBytes: number;
  reps: {
    commit: number;
    begin: number;
    simpleGit: number;
    undo: number;
    revert: number;
    health: number;
    largeUndo: number;
    largeCommit: number;
  };
}

function sizesFor(quick: boolean): Sizes {
  if (quick) {
    return {
      mediumFiles: 2_000,
      largeFiles: 5_000,
      fileBytes: 10_240,
      reps: { commit: 3, begin: 3, simpleGit: 3, undo: 3, revert: 3, health: 5, largeUndo: 2, largeCommit: 2 },
    };
  }
  return {
    mediumFiles: 20_000,
    largeFiles: 100_000,
    fileBytes: 10_240,
    reps: { commit: 15, begin: 15, simpleGit: 11, undo: 21, revert: 15, health: 31, largeUndo: 7, largeCommit: 7 },
  };
}

// -------------------------------------------------------------------------------------------------------------
// Attribution of a traced core operation: per git call (by position in the sequence), median duration.

type Trace = CoreTrace;

interface Attribution {
  lines: string[];
  /** Wall time covered by at least one git process (the union: calls may run side by side). */
  gitMs: number;
  processes: number;
  txCount: number;
  txMs: number;
  readCount: number;
  readMs: number;
  /** Store time while no git process ran (store work beside a git call is counted once, in git). */
  storeOutsideGitMs: number;
  /** Store time while a git process ran. */
  overlapMs: number;
  /** Covered by neither git nor the store: never negative. */
  restMs: number;
  /** One bullet summarizing the split. */
  summary: string;
}

const sum = (values: readonly number[]) => values.reduce((a, b) => a + b, 0);

/** How one traced operation's wall time splits: git (union), store outside git, and the rest (none of them). */
function splitOf(t: Trace): { git: number; storeOutside: number; overlap: number; rest: number } {
  const gitSpans = t.calls.map((c) => [c.startMs, c.endMs] as const);
  const git = unionMs(gitSpans);
  const store = unionMs(t.storeSpans);
  const covered = unionMs([...gitSpans, ...t.storeSpans]);
  return { git, storeOutside: covered - git, overlap: git + store - covered, rest: Math.max(0, t.totalMs - covered) };
}

function attribution(traces: readonly Trace[]): Attribution {
  if (traces.length === 0) {
    return {
      lines: [],
      gitMs: NaN,
      processes: 0,
      txCount: 0,
      txMs: NaN,
      readCount: 0,
      readMs: NaN,
      storeOutsideGitMs: NaN,
      overlapMs: NaN,
      restMs: NaN,
      summary: '',
    };
  }
  // Use the most common call sequence; report each position's median.
  const key = (t: Trace) => t.calls.map((c) => c.verb).join(' ');
  const counts = new Map<string, number>();
  for (const t of traces) counts.set(key(t), (counts.get(key(t)) ?? 0) + 1);
  const common = [...counts.entries()].sort((a, b) => b[1] - a[1])[0][0];
  const same = traces.filter((t) => key(t) === common);
  const positions = same[0].calls.length;
  const lines: string[] = [];
  for (let i = 0; i < positions; i++) {
    const durations = same.map((t) => t.calls[i].endMs - t.calls[i].startMs);
    const call = same[0].calls[i];
    lines.push(`${i + 1}. \`git ${describe(call.args)}\` — ${ms(median(durations))}`);
  }
  const splits = same.map(splitOf);
  const gitMs = median(splits.map((x) => x.git));
  const txCount = median(same.map((t) => t.storeTx.length));
  const txMs = median(same.map((t) => sum(t.storeTx)));
  const readCount = median(same.map((t) => t.storeRead.length));
  const readMs = median(same.map((t) => sum(t.storeRead)));
  const storeOutsideGitMs = median(splits.map((x) => x.storeOutside));
  const overlapMs = median(splits.map((x) => x.overlap));
  const restMs = median(splits.map((x) => x.rest));
  const spawnMs = median(same.map((t) => sum(t.calls.map((c) => c.spawnMs))));
  const overlapNote =
    overlapMs >= 0.05 ? `; ${ms(overlapMs)} of the store's time ran beside a git process and is counted in git` : '';
  const summary =
    `- total ${ms(median(same.map((t) => t.totalMs)))} = git processes ${ms(gitMs)} (${positions} calls, spawn → close, ` +
    `wall-clock union: calls side by side count once; the synchronous \`spawn()\` or launcher send blocked this ` +
    `process ${ms(spawnMs)} in all) + the durable store outside git ${ms(storeOutsideGitMs)} (${txCount} transactions ` +
    `${ms(txMs)}: store lock, journal append, fsync; ${readCount} reads ${ms(readMs)}${overlapNote}) + the rest ` +
    `${ms(restMs)} (covered by neither: repository lease, temporary-index copy, xstate, JS, event-loop turns between ` +
    'calls). Medians of each part, so they need not add up exactly.';
  return {
    lines,
    gitMs,
    processes: positions,
    txCount,
    txMs,
    readCount,
    readMs,
    storeOutsideGitMs,
    overlapMs,
    restMs,
    summary,
  };
}

/** A short, content-free rendering of a git command line (oids abbreviated, long values elided). */
function describe(args: readonly string[]): string {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === '-c') {
      i++;
      continue;
    } // -c config pairs: noise here
    if (a === '-m' && verb(args) === 'update-ref') {
      out.push('-m …');
      i++;
      continue;
    }
    out.push(/^[0-9a-f]{40}/.test(a) ? `${a.slice(0, 7)}${a.slice(40)}` : a.length > 60 ? `${a.slice(0, 57)}…` : a);
  }
  return out.join(' ');
}

/** What each git call of a restore is for, to compare with raw git's two commands. */
function purposeOf(call: GitCall, index: number): string {
  switch (call.verb) {
    case 'status':
      return index === 0 ? 'health probe before planning' : 'postcondition check after the restore';
    case 'read-tree':
    case 'commit-tree':
    case 'update-ref':
      return 'the restore itself';
    case 'diff-index':
    case 'diff-files':
    case 'ls-files':
      return 'postcondition check after the restore';
    default:
      return 'lookups';
  }
}

/**
 * Undo's time by purpose: each purpose's git calls as a wall-clock union (calls side by side count once), and what
 * no git call covered. Purposes that ran side by side are named with their overlap instead of a sum that exceeds the
 * wall time.
 */
function purposeTable(traces: readonly Trace[]): string[] {
  if (traces.length === 0) return [];
  const purposes = [...new Set(traces[0].calls.map(purposeOf))];
  const spansOf = (t: Trace, purpose: string) =>
    t.calls.filter((c, i) => purposeOf(c, i) === purpose).map((c) => [c.startMs, c.endMs] as const);
  const rows = purposes.map((purpose) => {
    const perTrace = traces.map((t) => t.calls.filter((c, i) => purposeOf(c, i) === purpose));
    const verbs = [...new Set(perTrace[0].map((c) => c.verb))].map((v) => `\`${v}\``).join(', ');
    return `| ${purpose} (${verbs}) | ${perTrace[0].length} | ${ms(median(traces.map((t) => unionMs(spansOf(t, purpose)))))} |`;
  });
  const sideBySide = median(traces.map((t) => sum(purposes.map((p) => unionMs(spansOf(t, p)))) - gitWallMs(t.calls)));
  const outside = median(traces.map((t) => Math.max(0, t.totalMs - gitWallMs(t.calls))));
  return [
    '| purpose | git processes | time (p50, wall clock) |',
    '|---|---:|---:|',
    ...rows,
    ...(sideBySide >= 0.05
      ? [`| — purposes above that ran side by side (counted in each) | — | ${ms(sideBySide)} |`]
      : []),
    `| outside git (no git process running: durable store transactions, lease, xstate, JS) | — | ${ms(outside)} |`,
  ];
}

function groupCommands(lines: readonly string[]): string {
  const counts = new Map<string, number>();
  for (const line of lines) {
    const v = verb(line.split(' '));
    counts.set(v, (counts.get(v) ?? 0) + 1);
  }
  return [...counts.entries()].map(([v, n]) => (n > 1 ? `${v} ×${n}` : v)).join(', ');
}

function statsCell(values: readonly number[]): string {
  return `${ms(median(values))} / ${ms(percentile(values, 99))}`;
}

// -------------------------------------------------------------------------------------------------------------

/** A part of the git section that failed: reported in its place, the other parts' figures kept. */
function failedPart(title: string, error: unknown): string {
  const text = error instanceof Error ? (error.stack ?? error.message) : String(error);
  return [
    `## ${title} — failed`,
    '',
    'The other parts of the git section ran as usual. Its error:',
    '',
    '```',
    text,
    '```',
    '',
  ].join('\n');
}

export async function runGitBench(options: GitBenchOptions): Promise<GitBenchResult> {
  const { workDir, progress } = options;
  const sizes = sizesFor(options.quick);
  const sections: string[] = [];
  const goals: GoalRow[] = [];
  const counter = new GitProcessCounter(workDir);
  /** Runs one part: its markdown and goals, or its failure in its place (null). */
  const part = async <T extends SectionResult>(title: string, line: string, run: () => Promise<T>) => {
    progress(line);
    try {
      const result = await run();
      sections.push(result.markdown);
      goals.push(...result.goals);
      return result;
    } catch (error) {
      progress(`${title} FAILED: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`);
      sections.push(failedPart(title, error));
      return null;
    }
  };

  // ---- 20k repository --------------------------------------------------------------------------------------
  progress(`building the ${sizes.mediumFiles.toLocaleString('en-US')}-file repository…`);
  const medium = await buildRepo(path.join(workDir, 'repo-medium'), sizes.mediumFiles, sizes.fileBytes);
  sections.push(repoLine('Medium repository', medium));
  const history = await VersionHistory.open(medium.dir);
  const undoTitle = 'Undo / Redo (issue 3)';
  try {
    if (options.only) {
      // Working on one part (AVH_BENCH_ONLY): just the named parts on the medium repository.
      if (options.only.includes('undo'))
        await part(undoTitle, 'Undo / Redo…', () => undoBench(medium, history, sizes.reps.undo, counter, undoTitle));
      if (options.only.includes('revert'))
        await part('Undo Only This Turn', 'Undo Only This Turn…', () =>
          revertBench(medium, history, sizes.reps.revert, counter),
        );
      if (options.only.includes('health'))
        await part('Repository health probe', 'health probe…', () =>
          healthBench(medium, history, sizes.reps.health, counter),
        );
      return { sections, goals };
    }
    const commit = await part('[Agent] version commit', '[Agent] version commit vs two raw baselines…', () =>
      commitBench(medium, history, sizes.reps.commit, counter),
    );
    await part('Base snapshot: beginTurn', 'base snapshot (beginTurn)…', () =>
      beginBench(medium, history, sizes.reps.begin, counter),
    );
    await part('simple-git vs our spawn wrapper', 'simple-git vs runGit…', () =>
      simpleGitBench(medium, history, sizes.reps.simpleGit),
    );
    const undo = await part(undoTitle, 'Undo / Redo vs read-tree -u --reset && commit…', () =>
      undoBench(medium, history, sizes.reps.undo, counter, undoTitle),
    );
    await part('Undo Only This Turn vs git revert', 'Undo Only This Turn vs git revert --no-edit…', () =>
      revertBench(medium, history, sizes.reps.revert, counter),
    );
    await part('Repository health probe', 'inspectRepositoryHealth vs git status…', () =>
      healthBench(medium, history, sizes.reps.health, counter),
    );

    // ---- 100k repository -----------------------------------------------------------------------------------
    await history.close();
    progress('removing the medium repository…');
    fs.rmSync(medium.dir, { recursive: true, force: true });

    const atScale = (g: GoalRow): GoalRow => ({
      ...g,
      id: g.id === '3.6' ? '3.8' : `${g.id} (scale)`,
      goal: g.pass === null ? g.goal : `— (info: the goal is set at ${shortSize(medium)})`,
      pass: null,
    });
    const scale = await part(
      'Large repository',
      `the ${sizes.largeFiles.toLocaleString('en-US')}-file repository…`,
      async () => {
        const large = await buildRepo(path.join(workDir, 'repo-large'), sizes.largeFiles, sizes.fileBytes);
        const largeHistory = await VersionHistory.open(large.dir);
        try {
          progress('Undo / Redo on the large repository…');
          const largeUndo = await undoBench(large, largeHistory, sizes.reps.largeUndo, counter, 'Undo / Redo at scale');
          progress('[Agent] version commit on the large repository…');
          const largeCommit = await commitBench(large, largeHistory, sizes.reps.largeCommit, null);
          const statusLarge = await rawStatusMs(large, 11);
          const markdown = [
            repoLine('Large repository', large),
            `Raw \`git status --porcelain=v2 -uall\` on it: ${ms(statusLarge)} (median of 11).`,
            '',
            largeUndo.markdown,
            largeCommit.markdown.replace('## [Agent] version commit (issue 2)', '## [Agent] version commit at scale'),
          ].join('\n');
          return {
            markdown,
            goals: [...largeUndo.goals, ...largeCommit.goals].map(atScale),
            large,
            largeUndo,
            largeCommit,
          };
        } finally {
          await largeHistory.close();
          progress('removing the large repository…');
          fs.rmSync(large.dir, { recursive: true, force: true });
        }
      },
    );
    if (undo && commit && scale)
      sections.push(scalingTable(undo, scale.largeUndo, commit, scale.largeCommit, medium, scale.large));
  } finally {
    await history.close().catch(() => {});
  }
  return { sections, goals };
}

function shortSize(repo: BenchRepo): string {
  const n = repo.files.length - 1;
  return n >= 1000 ? `${Math.round(n / 1000)}k files` : `${n} files`;
}

function repoLine(title: string, repo: BenchRepo): string {
  const b = repo.buildMs;
  return [
    `## ${title}`,
    '',
    `${(repo.files.length - 1).toLocaleString('en-US')} files of ~${(repo.fileBytes / 1024).toFixed(0)} KB pseudo-random text in ` +
      `${Math.ceil((repo.files.length - 1) / 20).toLocaleString('en-US')} folders (20 files each, two levels), ` +
      `${(repo.totalBytes / 1048576).toFixed(0)} MB, one commit on \`main\` (objects in one pack, written by \`git fast-import\` ` +
      `while the files were written; index built from HEAD and refreshed, so every entry has stat data), \`gc.auto=0\`. ` +
      `Built in ${((b.writeAndImport + b.index) / 1000).toFixed(1)} s (files + fast-import ${(b.writeAndImport / 1000).toFixed(1)} s, ` +
      `index ${(b.index / 1000).toFixed(1)} s).`,
    '',
  ].join('\n');
}

async function rawStatusMs(repo: BenchRepo, reps: number): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i <= reps; i++) {
    const t = await timed(() => git(repo.dir, ['status', '--porcelain=v2', '-uall']));
    if (i > 0) times.push(t);
  }
  return median(times);
}

// -------------------------------------------------------------------------------------------------------------
// Issue 2: [Agent] version commit (endTurn) vs raw `git add -A && git commit -q --no-verify`, and vs raw git doing the
// same plumbing steps as ours

interface SectionResult {
  markdown: string;
  goals: GoalRow[];
}

interface CommitResult extends SectionResult {
  coreMs: number;
  rawMs: number;
  plumbingMs: number;
}

/**
 * Raw git doing what our version commit does, step for step: the user's index copied to a temporary one (its mtime
 * kept, as ours keeps it: a fresh mtime makes git re-hash every racily clean entry), `add -A` into it, `write-tree`,
 * `commit-tree`, a compare-and-set `update-ref` of the branch, and the temporary index renamed over the user's.
 */
async function rawPlumbingCommit(repo: BenchRepo, head: string, message: string): Promise<void> {
  const gitDir = path.join(repo.dir, '.git');
  const userIndex = path.join(gitDir, 'index');
  const temporary = path.join(gitDir, 'bench-raw-index');
  fs.copyFileSync(userIndex, temporary);
  const { atime, mtime } = fs.statSync(userIndex);
  fs.utimesSync(temporary, atime, mtime);
  const env = { GIT_INDEX_FILE: temporary };
  await git(repo.dir, ['add', '-A'], { env });
  const tree = (await git(repo.dir, ['write-tree'], { env })).stdout.trim();
  const commit = (await git(repo.dir, ['commit-tree', tree, '-p', head, '-m', message])).stdout.trim();
  await git(repo.dir, ['update-ref', '-m', 'bench', 'refs/heads/main', commit, head]);
  fs.renameSync(temporary, userIndex);
}

async function commitBench(
  repo: BenchRepo,
  history: VersionHistory,
  reps: number,
  counter: GitProcessCounter | null,
): Promise<CommitResult> {
  const files = pickFiles(repo);
  const core: number[] = [];
  const raw: number[] = [];
  const rawAdd: number[] = [];
  const rawCommit: number[] = [];
  const plumbing: number[] = [];
  const traces: Trace[] = [];
  const variants = ['core', 'raw', 'plumbing'] as const;
  for (let rep = -1; rep < reps; rep++) {
    // Rotated every repetition, so each variant runs first, second and third equally often.
    const order = variants.map((_, i) => variants[(i + rep + 3) % variants.length]);
    for (const variant of order) {
      await resetTo(repo, repo.base);
      const message = `Bench turn ${rep}: edit a hundred files`;
      if (variant === 'core') {
        const { turnId } = await history.beginTurn({ chatId: CHAT, prompt: message });
        modifyFiles(repo, files, `core ${rep}`);
        let version: string | null = null;
        const trace = await traceGitCalls(async () => {
          version = (await history.endTurn(turnId, 'completed')).version;
        }, storeOf(history));
        if (!version) throw new Error('bench: endTurn made no version commit');
        if (rep >= 0) {
          core.push(trace.totalMs);
          traces.push(trace);
        }
      } else if (variant === 'raw') {
        modifyFiles(repo, files, `raw ${rep}`);
        const t0 = now();
        await git(repo.dir, ['add', '-A']);
        const t1 = now();
        await git(repo.dir, ['commit', '-q', '--no-verify', '-m', message]);
        const t2 = now();
        if (rep >= 0) {
          raw.push(t2 - t0);
          rawAdd.push(t1 - t0);
          rawCommit.push(t2 - t1);
        }
      } else {
        modifyFiles(repo, files, `plumbing ${rep}`);
        const t = await timed(() => rawPlumbingCommit(repo, repo.base, message));
        if (rep >= 0) plumbing.push(t);
      }
      await assertClean(repo.dir);
    }
  }

  let processLine = '';
  let processes = NaN;
  if (counter) {
    await resetTo(repo, repo.base);
    const { turnId } = await history.beginTurn({ chatId: CHAT, prompt: 'Bench turn: count processes' });
    modifyFiles(repo, files, 'count');
    const lines = await counter.count(() => history.endTurn(turnId, 'completed'));
    processes = lines.length;
    processLine =
      `- git processes per endTurn (PATH shim count): **${processes}** — ${groupCommands(lines)}. ` +
      "Raw `git add -A && git commit` starts 2 (plus git's own `maintenance run --auto` child of `commit`, not counted " +
      'by the shim); the raw plumbing sequence starts 4.';
    await resetTo(repo, repo.base);
  }

  const probe = await spawnProbe();
  const coreMs = median(core);
  const rawMs = median(raw);
  const plumbingMs = median(plumbing);
  const r = coreMs / rawMs;
  const rp = coreMs / plumbingMs;
  const attr = attribution(traces);
  const markdown = [
    '## [Agent] version commit (issue 2)',
    '',
    `Each repetition: reset to the base commit (untimed), begin a turn on the clean tree (untimed), append a line to ` +
      `the same 100 files spread over the tree, then time \`endTurn(turnId, 'completed')\` alone. Two raw baselines ` +
      'make the same edit: `git add -A` + `git commit -q --no-verify -m …` (porcelain: it also refreshes and rewrites ' +
      "the real index and runs git's `maintenance run --auto`, work ours skips), and the raw plumbing doing what ours " +
      'does (a copy of `.git/index` with its mtime, `add -A` into it, `write-tree`, `commit-tree`, a compare-and-set ' +
      '`update-ref`, the copy renamed over `.git/index`). Every git of all three starts the same way (through the ' +
      `git launcher). The three rotate in one loop, ${reps} timed repetitions each after one warm-up.`,
    '',
    '| variant | p50 / p99 | ratio of `endTurn` to it (p50) |',
    '|---|---:|---:|',
    `| \`endTurn\` → \`[Agent]\` commit | ${statsCell(core)} | — |`,
    `| raw \`git add -A && git commit -q --no-verify\` | ${statsCell(raw)} | **${fmtRatio(r)}** |`,
    `| — of which \`git add -A\` | ${statsCell(rawAdd)} | |`,
    `| — of which \`git commit\` | ${statsCell(rawCommit)} | |`,
    `| raw plumbing: index copy + \`add -A\` + \`write-tree\` + \`commit-tree\` + \`update-ref\` + rename | ` +
      `${statsCell(plumbing)} | **${fmtRatio(rp)}** |`,
    '',
    `Where \`endTurn\`'s time goes (medians over the same repetitions; git calls timed from the send to the answer, ` +
      'product code untouched):',
    '',
    ...attr.lines,
    '',
    attr.summary,
    ...(processLine ? [processLine] : []),
    `- Context: ${probe.text}.`,
    '',
  ].join('\n');
  return {
    markdown,
    coreMs,
    rawMs,
    plumbingMs,
    goals: [
      {
        id: '2.2',
        measure: `\`[Agent]\` version commit (endTurn) vs \`git add -A && git commit\`, 100 files changed (${shortSize(repo)})`,
        goal: 'ratio ≤ 1.05',
        measured: `${fmtRatio(r)} (${ms(coreMs)} vs ${ms(rawMs)})`,
        pass: r <= 1.05,
      },
      {
        id: '2.2',
        measure: `\`[Agent]\` version commit (endTurn) vs raw git doing the same plumbing steps (${shortSize(repo)})`,
        goal: '— (info: like for like)',
        measured: `${fmtRatio(rp)} (${ms(coreMs)} vs ${ms(plumbingMs)})`,
        pass: null,
      },
    ],
  };
}

// -------------------------------------------------------------------------------------------------------------
// Issue 2: base snapshot (beginTurn) on a clean tree and on a tree with 100 modified files

async function beginBench(
  repo: BenchRepo,
  history: VersionHistory,
  reps: number,
  counter: GitProcessCounter,
): Promise<SectionResult> {
  const files = pickFiles(repo);
  const { args: statusArgs, env: statusEnv } = await probeCommand(history);
  const cleanCore: number[] = [];
  const cleanRaw: number[] = [];
  const dirtyCore: number[] = [];
  const dirtyRaw: number[] = [];
  const dirtyTraces: Trace[] = [];
  await resetTo(repo, repo.base);

  // Clean tree: beginTurn vs the one `git status` it needs.
  for (let rep = -1; rep < reps; rep++) {
    const order = rep % 2 === 0 ? (['core', 'raw'] as const) : (['raw', 'core'] as const);
    for (const variant of order) {
      if (variant === 'core') {
        let turnId = '';
        let base = '';
        const t = await timed(
          async () =>
            ({ turnId, baseCommit: base } = await history.beginTurn({ chatId: CHAT, prompt: 'Bench: clean begin' })),
        );
        if (base !== repo.base) throw new Error('bench: a clean beginTurn should use HEAD as its base');
        await history.endTurn(turnId, 'cancelled');
        if (rep >= 0) cleanCore.push(t);
      } else {
        const t = await timed(() => git(repo.dir, statusArgs, { env: statusEnv }));
        if (rep >= 0) cleanRaw.push(t);
      }
    }
  }
  const cleanCount = await countBegin(history, counter, 'Bench: count clean begin');

  // 100 modified files: beginTurn vs raw git doing the same snapshot (status, temp index copied from .git/index,
  // add -A, write-tree, commit-tree, update-ref).
  modifyFiles(repo, files, 'dirty begin');
  const head = await headOf(repo.dir);
  for (let rep = -1; rep < reps; rep++) {
    const order = rep % 2 === 0 ? (['core', 'raw'] as const) : (['raw', 'core'] as const);
    for (const variant of order) {
      if (variant === 'core') {
        let turnId = '';
        const trace = await traceGitCalls(
          async () => ({ turnId } = await history.beginTurn({ chatId: CHAT, prompt: 'Bench: dirty begin' })),
          storeOf(history),
        );
        await history.endTurn(turnId, 'cancelled');
        if (rep >= 0) {
          dirtyCore.push(trace.totalMs);
          dirtyTraces.push(trace);
        }
      } else {
        const t0 = now();
        await git(repo.dir, statusArgs, { env: statusEnv });
        const index = TemporaryIndex.create(history.repository);
        try {
          await git(repo.dir, ['add', '-A', '--', '.'], { env: index.env });
          const tree = (await git(repo.dir, ['write-tree'], { env: index.env })).stdout.trim();
          const commit = (
            await git(repo.dir, ['commit-tree', tree, '-p', head], { input: 'bench raw snapshot\n' })
          ).stdout.trim();
          await git(repo.dir, ['update-ref', `refs/bench/raw-${rep}`, commit]);
        } finally {
          index.dispose();
        }
        if (rep >= 0) dirtyRaw.push(now() - t0);
      }
    }
  }
  const dirtyCount = await countBegin(history, counter, 'Bench: count dirty begin');
  await resetTo(repo, repo.base);

  const attr = attribution(dirtyTraces);
  const markdown = [
    '## Base snapshot: beginTurn (issue 2)',
    '',
    'Git processes counted with a PATH shim: a `git` script first on `PATH` that appends its command line to a log ' +
      'and `exec`s the real git (one line = one git process). Times: alternating loop, ' +
      `${reps} repetitions each after one warm-up; each begun turn is ended \`cancelled\` afterwards (untimed).`,
    '',
    '| tree | `beginTurn` p50 / p99 | raw git doing the same p50 / p99 | ratio | git processes |',
    '|---|---:|---:|---:|---|',
    `| clean (base = HEAD, nothing written) | ${statsCell(cleanCore)} | ${statsCell(cleanRaw)} (the probe's \`git status\`) | ` +
      `${fmtRatio(median(cleanCore) / median(cleanRaw))} | **${cleanCount.length}** — ${groupCommands(cleanCount)} |`,
    `| 100 files modified (snapshot commit + private ref) | ${statsCell(dirtyCore)} | ${statsCell(dirtyRaw)} (status, temp index, ` +
      `add -A, write-tree, commit-tree, update-ref) | ${fmtRatio(median(dirtyCore) / median(dirtyRaw))} | ` +
      `**${dirtyCount.length}** — ${groupCommands(dirtyCount)} |`,
    '',
    'Where the dirty `beginTurn` time goes (medians):',
    '',
    ...attr.lines,
    '',
    attr.summary,
    '',
  ].join('\n');
  return {
    markdown,
    goals: [
      {
        id: '2.3',
        measure: `Base snapshot (beginTurn), clean tree: git processes (${shortSize(repo)})`,
        goal: '≤ 1',
        measured: `${cleanCount.length} (${ms(median(cleanCore))})`,
        pass: cleanCount.length <= 1,
      },
      {
        id: '2.3',
        measure: `Base snapshot (beginTurn), 100 files modified (${shortSize(repo)})`,
        goal: '—',
        measured: `${ms(median(dirtyCore))}, ${dirtyCount.length} git processes (raw same steps ${ms(median(dirtyRaw))})`,
        pass: null,
      },
    ],
  };
}

/** The exact git command line and GIT_* environment inspectRepositoryHealth uses (captured, so the raw baseline follows the product). */
async function probeCommand(history: VersionHistory): Promise<{ args: string[]; env: Record<string, string> }> {
  // The probe runs through the repository's git client: take its command line from the core and check with the git
  // shim that it starts exactly that one process.
  const counter = new GitProcessCounter(fs.mkdtempSync(path.join(os.tmpdir(), 'avh-probe-shim-')));
  const lines = await counter.count(() => inspectRepositoryHealth(history.repository));
  // Every git process of ours starts with the pinned configuration (gitClient.ts): the raw baseline runs it too.
  const args = [...history.repository.git.pinnedArgs(history.repository.root), ...PROBE_STATUS_ARGS];
  if (lines.length !== 1 || lines[0] !== args.join(' '))
    throw new Error(
      `bench: expected the health probe to run one \`git ${args.join(' ')}\`, it ran ${JSON.stringify(lines)}`,
    );
  return { args, env: { GIT_OPTIONAL_LOCKS: '0' } };
}

/** Git processes started by one beginTurn (the turn is then ended cancelled, outside the count). */
async function countBegin(history: VersionHistory, counter: GitProcessCounter, prompt: string): Promise<string[]> {
  let turnId = '';
  const lines = await counter.count(async () => ({ turnId } = await history.beginTurn({ chatId: CHAT, prompt })));
  await history.endTurn(turnId, 'cancelled');
  return lines;
}

/**
 * process.env without the variables simple-git 3.36 refuses in `.env()` unless an `unsafe.allowUnsafe*` option is
 * set (EDITOR, PAGER, GIT_EDITOR, GIT_ASKPASS, GIT_CONFIG_*, … — `npm run` sets EDITOR, for one).
 */
function simpleGitSafeEnv(): Record<string, string> {
  const refused = new Set([
    'editor',
    'git_askpass',
    'git_config_global',
    'git_config_system',
    'git_config_count',
    'git_config',
    'git_editor',
    'git_exec_path',
    'git_external_diff',
    'git_pager',
    'git_proxy_command',
    'git_template_dir',
    'git_sequence_editor',
    'git_ssh',
    'git_ssh_command',
    'pager',
    'prefix',
    'ssh_askpass',
  ]);
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    const key = name.toLowerCase().trim();
    if (value === undefined || refused.has(key) || key.startsWith('git_config_')) continue;
    env[name] = value;
  }
  return env;
}

// -------------------------------------------------------------------------------------------------------------
// simple-git (default configuration) vs runGit for one snapshot: add -A, write-tree, commit-tree

async function simpleGitBench(repo: BenchRepo, history: VersionHistory, reps: number): Promise<SectionResult> {
  const files = pickFiles(repo);
  await resetTo(repo, repo.base);
  modifyFiles(repo, files, 'simple-git');
  const head = repo.base;
  type Variant = 'simple-git' | 'runGit' | 'simple-git, add --verbose';
  const variants: Variant[] = ['simple-git', 'runGit', 'simple-git, add --verbose'];
  const times = new Map<Variant, number[]>(variants.map((v) => [v, []]));
  const addTimes = new Map<Variant, number[]>(variants.map((v) => [v, []]));
  const trees = new Set<string>();
  for (let rep = -1; rep < reps; rep++) {
    // Rotate the order each repetition.
    const order = variants.map((_, i) => variants[(i + rep + 3) % variants.length]);
    for (const variant of order) {
      const index = TemporaryIndex.create(history.repository);
      try {
        let t0: number;
        let tAdd: number;
        let tree: string;
        if (variant === 'runGit') {
          t0 = now();
          await runGit(repo.dir, ['add', '-A'], { env: index.env });
          tAdd = now();
          tree = (await runGit(repo.dir, ['write-tree'], { env: index.env })).stdout.trim();
          await runGit(repo.dir, ['commit-tree', tree, '-p', head, '-m', 'bench snapshot']);
        } else {
          const sg = simpleGit(repo.dir).env({ ...simpleGitSafeEnv(), ...index.env });
          const addArgs = variant === 'simple-git' ? ['add', '-A'] : ['add', '-A', '--verbose'];
          t0 = now();
          await sg.raw(addArgs);
          tAdd = now();
          tree = (await sg.raw(['write-tree'])).trim();
          await sg.raw(['commit-tree', tree, '-p', head, '-m', 'bench snapshot']);
        }
        const t1 = now();
        trees.add(tree);
        if (rep >= 0) {
          times.get(variant)!.push(t1 - t0);
          addTimes.get(variant)!.push(tAdd - t0);
        }
      } finally {
        index.dispose();
      }
    }
  }
  if (trees.size !== 1) throw new Error('bench: simple-git and runGit snapshots differ');
  await resetTo(repo, repo.base);
  const sgMs = median(times.get('simple-git')!);
  const rgMs = median(times.get('runGit')!);
  const markdown = [
    '## simple-git vs our spawn wrapper ([product contract §10](../docs/product-contract.md#10-performance-facts))',
    '',
    `One snapshot of the ${shortSize(repo)} tree with 100 files modified, through a temporary index copied from ` +
      '`.git/index`: `git add -A`, `git write-tree`, `git commit-tree`. simple-git 3 with its default configuration ' +
      '(`simpleGit(dir).env({...process.env, GIT_INDEX_FILE}).raw([...])`; the environment minus the variables simple-git ' +
      "refuses without an `unsafe` opt-in, such as `EDITOR` and `PAGER`) vs the product's `runGit`. " +
      `${reps} repetitions each after one warm-up, order rotated every repetition.`,
    '',
    '| through | snapshot p50 / p99 | of which `add -A` p50 |',
    '|---|---:|---:|',
    ...variants.map(
      (v) =>
        `| ${v === 'runGit' ? '`runGit` (thin spawn wrapper)' : v === 'simple-git' ? 'simple-git, default' : 'simple-git, `add -A --verbose` (so add prints)'} | ${statsCell(times.get(v)!)} | ${ms(median(addTimes.get(v)!))} |`,
    ),
    '',
    `simple-git's completion plugin waits 50 ms after any command that wrote nothing to stdout or stderr (\`git add -A\` ` +
      'is silent); its `completion` options only choose between the `exit` and `close` events and do not remove that ' +
      'wait (simple-git 3.x source, `completionDetectionPlugin`). Making the command print (`--verbose`) avoids it, which ' +
      'confirms where the time goes; a thin spawn wrapper avoids it by construction.',
    '',
  ].join('\n');
  return {
    markdown,
    goals: [
      {
        id: '2.5',
        measure: `One snapshot (add -A + write-tree + commit-tree): simple-git default vs \`runGit\` (${shortSize(repo)})`,
        goal: '— (justifies the wrapper)',
        measured: `${ms(sgMs)} vs ${ms(rgMs)} (+${ms(sgMs - rgMs)}, ${fmtRatio(sgMs / rgMs)})`,
        pass: null,
      },
    ],
  };
}

// -------------------------------------------------------------------------------------------------------------
// Issue 3: Undo / Redo end to end vs raw `git read-tree -u --reset <target> && git commit`

interface UndoResult extends SectionResult {
  undoMs: number;
  rawUndoMs: number;
  redoMs: number;
  rawRedoMs: number;
}

async function undoBench(
  repo: BenchRepo,
  history: VersionHistory,
  reps: number,
  counter: GitProcessCounter,
  title: string,
): Promise<UndoResult> {
  const files = pickFiles(repo);
  const undo: number[] = [];
  const rawUndo: number[] = [];
  const rawUndoReadTree: number[] = [];
  const redo: number[] = [];
  const rawRedo: number[] = [];
  const undoTraces: Trace[] = [];
  const redoTraces: Trace[] = [];

  /** An [Agent] version V changing 100 files on top of the base; returns its turn and V, with a fresh index at V. */
  const makeTurn = async (tag: string) => {
    await resetTo(repo, repo.base);
    const { turnId } = await history.beginTurn({ chatId: CHAT, prompt: `Bench undo turn ${tag}` });
    modifyFiles(repo, files, `undo ${tag}`);
    const { version } = await history.endTurn(turnId, 'completed');
    if (!version) throw new Error('bench: the turn made no version');
    await resetTo(repo, version);
    return { turnId, version };
  };
  const rawRestore = async (target: string, sink: number[], readTreeSink?: number[]) => {
    const t0 = now();
    await git(repo.dir, ['read-tree', '-u', '--reset', target]);
    const t1 = now();
    await git(repo.dir, ['commit', '-q', '--no-verify', '-m', 'raw restore']);
    const t2 = now();
    sink.push(t2 - t0);
    readTreeSink?.push(t1 - t0);
  };

  for (let rep = -1; rep < reps; rep++) {
    const keep = rep >= 0;
    const { turnId, version } = await makeTurn(String(rep));
    let restoreCommit = '';
    const coreUndo = async () => {
      let result: Awaited<ReturnType<VersionHistory['undo']>> | undefined;
      const trace = await traceGitCalls(async () => {
        result = await history.undo(turnId);
      }, storeOf(history));
      if (result?.result !== 'restored' || !result.restoreCommit)
        throw new Error(`bench: undo returned ${result?.result}`);
      restoreCommit = result.restoreCommit;
      const tree = (await git(repo.dir, ['rev-parse', 'HEAD^{tree}', `${repo.base}^{tree}`])).stdout.trim().split('\n');
      if (tree[0] !== tree[1]) throw new Error('bench: undo did not restore the base tree');
      if (keep) {
        undo.push(trace.totalMs);
        undoTraces.push(trace);
      }
    };
    const plainUndo = async () => {
      await rawRestore(repo.base, keep ? rawUndo : [], keep ? rawUndoReadTree : undefined);
      await assertClean(repo.dir);
    };
    if (rep % 2 === 0) {
      await coreUndo();
      await resetTo(repo, version);
      await plainUndo();
    } else {
      await plainUndo();
      await resetTo(repo, version);
      await coreUndo();
    }
    // Redo: from the undo's result R (fresh index), core redo vs raw read-tree back to V + commit.
    await resetTo(repo, restoreCommit);
    const coreRedo = async () => {
      let result: Awaited<ReturnType<VersionHistory['redo']>> | undefined;
      const trace = await traceGitCalls(async () => {
        result = await history.redo();
      }, storeOf(history));
      if (result?.result !== 'restored') throw new Error(`bench: redo returned ${result?.result}`);
      if (keep) {
        redo.push(trace.totalMs);
        redoTraces.push(trace);
      }
    };
    const plainRedo = () => rawRestore(version, keep ? rawRedo : []);
    if (rep % 2 === 0) {
      await plainRedo();
      await resetTo(repo, restoreCommit);
      await coreRedo();
    } else {
      await coreRedo();
      await resetTo(repo, restoreCommit);
      await plainRedo();
    }
  }

  // Process counts (one extra, untimed round through the shim).
  const { turnId } = await makeTurn('count');
  const undoLines = await counter.count(() => history.undo(turnId));
  const redoLines = await counter.count(() => history.redo());
  await resetTo(repo, repo.base);

  const probe = await spawnProbe();
  const undoMs = median(undo);
  const rawUndoMs = median(rawUndo);
  const redoMs = median(redo);
  const rawRedoMs = median(rawRedo);
  const undoAttr = attribution(undoTraces);
  const redoAttr = attribution(redoTraces);
  const markdown = [
    `## ${title} — ${shortSize(repo)}`,
    '',
    'Each repetition: a completed turn changing 100 files makes version V (untimed), index refreshed at V; then, in ' +
      'alternating order from the same state, `history.undo(turnId)` (the VersionHistory was opened before timing; no ' +
      'process start) and raw `git read-tree -u --reset <base> && git commit -q --no-verify -m …`, with `git reset --hard V` ' +
      "between them (untimed). Then Redo from the undo's result R: `history.redo()` vs raw `git read-tree -u --reset V && " +
      `git commit\`. ${reps} timed repetitions after one warm-up.`,
    '',
    '| operation | core p50 / p99 | raw p50 / p99 | ratio (p50) | git processes (core) |',
    '|---|---:|---:|---:|---|',
    `| Undo | ${statsCell(undo)} | ${statsCell(rawUndo)} | **${fmtRatio(undoMs / rawUndoMs)}** | **${undoLines.length}** |`,
    `| Redo | ${statsCell(redo)} | ${statsCell(rawRedo)} | **${fmtRatio(redoMs / rawRedoMs)}** | **${redoLines.length}** |`,
    '',
    `Raw undo split: \`read-tree -u --reset\` ${ms(median(rawUndoReadTree))}, \`commit\` ${ms(rawUndoMs - median(rawUndoReadTree))}.`,
    '',
    "Where Undo's time goes, by purpose (each git call timed spawn → close):",
    '',
    ...purposeTable(undoTraces),
    '',
    'Per git call, in order (medians):',
    '',
    ...undoAttr.lines,
    '',
    undoAttr.summary,
    `- Redo: inside git ${ms(redoAttr.gitMs)} (${redoAttr.processes} calls, wall-clock union), the store outside git ` +
      `${ms(redoAttr.storeOutsideGitMs)} (${redoAttr.txCount} transactions ${ms(redoAttr.txMs)}, ${redoAttr.readCount} ` +
      `reads ${ms(redoAttr.readMs)}), the rest ${ms(redoAttr.restMs)}.`,
    `- git processes per Undo (PATH shim): ${groupCommands(undoLines)}.`,
    `- Context: ${probe.text}.`,
    '',
  ].join('\n');
  return {
    markdown,
    undoMs,
    rawUndoMs,
    redoMs,
    rawRedoMs,
    goals: [
      {
        id: '3.6',
        measure: `Undo end to end vs \`read-tree -u --reset && commit\`, 100 files differ (${shortSize(repo)})`,
        goal: 'ratio ≤ 1.15',
        measured: `${fmtRatio(undoMs / rawUndoMs)} (${ms(undoMs)} vs ${ms(rawUndoMs)}; ${undoLines.length} git processes)`,
        pass: undoMs / rawUndoMs <= 1.15,
      },
      {
        id: '3.6',
        measure: `Redo end to end vs \`read-tree -u --reset && commit\` (${shortSize(repo)})`,
        goal: '— (no goal; same saga)',
        measured: `${fmtRatio(redoMs / rawRedoMs)} (${ms(redoMs)} vs ${ms(rawRedoMs)}; ${redoLines.length} git processes)`,
        pass: null,
      },
    ],
  };
}

// -------------------------------------------------------------------------------------------------------------
// Issue 12: Undo Only This Turn vs raw `git revert --no-edit` of the same commit

/**
 * Chat A's turn changes 100 files (version V), then chat B's turn changes 100 other files (W). From W (fresh
 * index), alternately: `history.undo(turnA, { only: 'turn' })` and raw `git revert --no-edit V`, with
 * `git reset --hard W` between them (untimed). Both must produce the same tree.
 */
export async function revertBench(
  repo: BenchRepo,
  history: VersionHistory,
  reps: number,
  counter: GitProcessCounter,
): Promise<SectionResult> {
  const all = pickFiles(repo, 200);
  const filesA = all.filter((_, i) => i % 2 === 0);
  const filesB = all.filter((_, i) => i % 2 === 1);
  const core: number[] = [];
  const raw: number[] = [];
  const traces: Trace[] = [];
  const makeTurns = async (tag: string) => {
    await resetTo(repo, repo.base);
    const a = await history.beginTurn({ chatId: 'bench-chat-a', prompt: `Bench revert A ${tag}` });
    modifyFiles(repo, filesA, `revert A ${tag}`);
    const va = (await history.endTurn(a.turnId, 'completed')).version;
    const b = await history.beginTurn({ chatId: 'bench-chat-b', prompt: `Bench revert B ${tag}` });
    modifyFiles(repo, filesB, `revert B ${tag}`);
    const vb = (await history.endTurn(b.turnId, 'completed')).version;
    if (!va || !vb) throw new Error('bench: a turn made no version');
    await resetTo(repo, vb);
    return { turnId: a.turnId, version: va, later: vb };
  };
  let expectedTree = '';
  const treeNow = async () => (await git(repo.dir, ['rev-parse', 'HEAD^{tree}'])).stdout.trim();
  for (let rep = -1; rep < reps; rep++) {
    const keep = rep >= 0;
    const { turnId, version, later } = await makeTurns(String(rep));
    const coreRevert = async () => {
      let result: Awaited<ReturnType<VersionHistory['undo']>> | undefined;
      const trace = await traceGitCalls(async () => {
        result = await history.undo(turnId, { only: 'turn' });
      }, storeOf(history));
      if (result?.result !== 'restored' || result.scope !== 'turn')
        throw new Error(`bench: undo only this turn returned ${result?.result}/${result?.scope}`);
      if (keep) {
        core.push(trace.totalMs);
        traces.push(trace);
      }
      return treeNow();
    };
    const rawRevert = async () => {
      const t0 = now();
      await git(repo.dir, ['revert', '--no-edit', version]);
      if (keep) raw.push(now() - t0);
      await assertClean(repo.dir);
      return treeNow();
    };
    let coreTree: string;
    let rawTree: string;
    if (rep % 2 === 0) {
      coreTree = await coreRevert();
      await resetTo(repo, later);
      rawTree = await rawRevert();
    } else {
      rawTree = await rawRevert();
      await resetTo(repo, later);
      coreTree = await coreRevert();
    }
    if (coreTree !== rawTree) throw new Error('bench: Undo Only This Turn and git revert made different trees');
    expectedTree = coreTree;
  }
  const { turnId } = await makeTurns('count');
  const lines = await counter.count(() => history.undo(turnId, { only: 'turn' }));
  await resetTo(repo, repo.base);
  const coreMs = median(core);
  const rawMs = median(raw);
  const attr = attribution(traces);
  const markdown = [
    `## Undo Only This Turn vs \`git revert\` (issue 12) — ${shortSize(repo)}`,
    '',
    "Each repetition: chat A's turn changes 100 files (version V), then chat B's turn changes 100 other files (untimed). " +
      "From there (index refreshed), in alternating order: `history.undo(turnA, { only: 'turn' })` (the VersionHistory " +
      'opened before timing) and raw `git revert --no-edit V`, with `git reset --hard` between them (untimed); both ' +
      `must make the same tree (${expectedTree.slice(0, 7)} in the last repetition). ${reps} timed repetitions after one warm-up.`,
    '',
    '| operation | core p50 / p99 | raw p50 / p99 | ratio (p50) | git processes (core) |',
    '|---|---:|---:|---:|---|',
    `| Undo Only This Turn | ${statsCell(core)} | ${statsCell(raw)} | **${fmtRatio(coreMs / rawMs)}** | **${lines.length}** |`,
    '',
    'Where its time goes, by purpose (each git call timed spawn → close):',
    '',
    ...purposeTable(traces),
    '',
    attr.summary,
    `- git processes (PATH shim): ${groupCommands(lines)}.`,
    '',
  ].join('\n');
  return {
    markdown,
    goals: [
      {
        id: '12.3',
        measure: `Undo Only This Turn vs \`git revert --no-edit\` of the same commit, 100 of 200 changed files (${shortSize(repo)})`,
        goal: 'ratio ≤ 1.3',
        measured: `${fmtRatio(coreMs / rawMs)} (${ms(coreMs)} vs ${ms(rawMs)}; ${lines.length} git processes)`,
        pass: coreMs / rawMs <= 1.3,
      },
    ],
  };
}

/** `node out/bench/gitBench.js revert [--quick]`: just the Undo Only This Turn section, printed as markdown. */
async function runRevertOnly(quick: boolean): Promise<void> {
  const sizes = sizesFor(quick);
  const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'avh-bench-revert-'));
  try {
    const medium = await buildRepo(path.join(workDir, 'repo-medium'), sizes.mediumFiles, sizes.fileBytes);
    const history = await VersionHistory.open(medium.dir);
    try {
      const result = await revertBench(medium, history, sizes.reps.revert, new GitProcessCounter(workDir));
      process.stdout.write(`${repoLine('Medium repository', medium)}\n${result.markdown}\n`);
      for (const g of result.goals)
        process.stdout.write(`| ${g.id} | ${g.measure} | ${g.goal} | ${g.measured} | ${g.pass ? 'pass' : 'MISS'} |\n`);
    } finally {
      await history.close();
    }
  } finally {
    fs.rmSync(workDir, { recursive: true, force: true });
  }
}

if (require.main === module && process.argv[2] === 'revert') {
  void runRevertOnly(process.argv.includes('--quick')).catch((error: unknown) => {
    process.stderr.write(`${String(error)}\n`);
    process.exitCode = 1;
  });
}

// -------------------------------------------------------------------------------------------------------------
// Issue 3: inspectRepositoryHealth vs one raw `git status` with the probe's flags

async function healthBench(
  repo: BenchRepo,
  history: VersionHistory,
  reps: number,
  counter: GitProcessCounter,
): Promise<SectionResult> {
  const { args, env } = await probeCommand(history);
  const rows: string[] = [];
  const goals: GoalRow[] = [];
  const files = pickFiles(repo);
  const probeCount = await counter.count(() => inspectRepositoryHealth(history.repository));
  for (const state of ['clean', '100 files modified'] as const) {
    await resetTo(repo, repo.base);
    if (state !== 'clean') modifyFiles(repo, files, 'health');
    // Refresh the index once so both variants see the same stat data (the probe itself never writes the index).
    await git(repo.dir, ['update-index', '-q', '--refresh']).catch(() => {});
    const core: number[] = [];
    const raw: number[] = [];
    for (let rep = -1; rep < reps; rep++) {
      const order = rep % 2 === 0 ? (['core', 'raw'] as const) : (['raw', 'core'] as const);
      for (const variant of order) {
        const t =
          variant === 'core'
            ? await timed(() => inspectRepositoryHealth(history.repository))
            : await timed(() => git(repo.dir, args, { env }));
        if (rep >= 0) (variant === 'core' ? core : raw).push(t);
      }
    }
    const r = median(core) / median(raw);
    rows.push(`| ${state} | ${statsCell(core)} | ${statsCell(raw)} | **${fmtRatio(r)}** |`);
    goals.push({
      id: '3.7',
      measure: `\`inspectRepositoryHealth\` (the git client) vs one raw \`git status --porcelain=v2 --branch\` (${shortSize(repo)}, ${state})`,
      goal: 'ratio ≤ 1.05',
      measured: `${fmtRatio(r)} (${ms(median(core))} vs ${ms(median(raw))})`,
      pass: r <= 1.05,
    });
  }
  await resetTo(repo, repo.base);
  const markdown = [
    `## Repository health probe (issue 3) — ${shortSize(repo)}`,
    '',
    `Raw: \`git ${args.join(' ')}\`${
      Object.keys(env).length
        ? ` with \`${Object.entries(env)
            .map(([k, v]) => `${k}=${v}`)
            .join(' ')}\``
        : ''
    }, ` +
      `the probe's exact command line (captured from the probe in this run); ${reps} alternating ` +
      `repetitions after one warm-up. The probe starts **${probeCount.length}** git process (${groupCommands(probeCount)}) ` +
      'plus marker-file `stat`s.',
    '',
    '| tree | probe p50 / p99 | raw p50 / p99 | ratio (p50) |',
    '|---|---:|---:|---:|',
    ...rows,
    '',
  ].join('\n');
  return { markdown, goals };
}

// -------------------------------------------------------------------------------------------------------------

function scalingTable(
  undo20: UndoResult,
  undo100: UndoResult,
  commit20: CommitResult,
  commit100: CommitResult,
  m: BenchRepo,
  l: BenchRepo,
): string {
  const row = (label: string, a: number, b: number) => `| ${label} | ${ms(a)} | ${ms(b)} | ${fmtRatio(a / b)} |`;
  return [
    '## How cost grows with size (issue 3)',
    '',
    '| operation | core p50 | raw p50 | ratio |',
    '|---|---:|---:|---:|',
    row(`Undo, ${shortSize(m)}`, undo20.undoMs, undo20.rawUndoMs),
    row(`Undo, ${shortSize(l)}`, undo100.undoMs, undo100.rawUndoMs),
    row(`Redo, ${shortSize(m)}`, undo20.redoMs, undo20.rawRedoMs),
    row(`Redo, ${shortSize(l)}`, undo100.redoMs, undo100.rawRedoMs),
    row(`[Agent] commit vs \`add -A && commit\`, ${shortSize(m)}`, commit20.coreMs, commit20.rawMs),
    row(`[Agent] commit vs \`add -A && commit\`, ${shortSize(l)}`, commit100.coreMs, commit100.rawMs),
    row(`[Agent] commit vs the raw plumbing, ${shortSize(m)}`, commit20.coreMs, commit20.plumbingMs),
    row(`[Agent] commit vs the raw plumbing, ${shortSize(l)}`, commit100.coreMs, commit100.plumbingMs),
    '',
  ].join('\n');
}
