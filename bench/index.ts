/**
 * `npm run bench`: every benchmark section in one run; prints markdown and writes bench/RESULTS.md.
 *
 * The sections are SECTIONS below, one line each, run and printed in that order. Adding one: a file
 * bench/<name>Bench.ts exporting a runner that returns its markdown (and goal rows, if any), and one line here that
 * adapts the runner's result to `{ markdown, goals }` (bench/benchSection.ts). A section needing the real-VS-Code
 * harness says so (`needs: HARNESS`): scripts/vscode/setup.sh installs it first (idempotent, as `npm test` runs it).
 *
 * Sections are independent: one that fails (or whose setup failed) is reported in its place in RESULTS.md with its
 * error, the others' figures are kept, and the run exits 1 at the end. RESULTS.md is written again after every
 * section, so an interrupted run keeps what finished.
 *
 * AVH_BENCH_QUICK=1 runs tiny repositories with few repetitions (for working on the bench itself) and writes
 * bench/.work/RESULTS.quick.md instead. AVH_BENCH_ONLY=<names> runs only those sections (secrets,hook,…) or parts of
 * the git section on the medium repository (undo,revert,health), and writes bench/.work/RESULTS.only.md.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { gitLauncherReady, startGitLauncher } from '../src/core/git/gitLauncher';
import type { BenchContext, BenchSection, GoalRow, SectionResult } from './benchSection';
import { GIT_PARTS, runGitBench } from './gitBench';
import { runAgentNotesBench } from './agentNotesBench';
import { runBlameBench } from './blameBench';
import { runHookBench } from './hookBench';
import { runLargeRepoBench } from './largeRepoBench';
import { runLauncherBench } from './launcherBench';
import { runSecretsBench } from './secretsBench';
import { runStoreSection } from './storeBench';
import { runToolWriteBench } from './toolWriteBench';
import { runTurnChangesBench } from './turnChangesBench';
import { runViewBench } from './viewBench';

const HARNESS = 'vscode-harness';

/** The sections, in the order they run and print: one line each (see the header). */
const SECTIONS: readonly BenchSection[] = [
  { name: 'git', title: 'Git operations (issues 2, 3, 12)', run: runGitSection },
  { name: 'view', title: 'Version History view', needs: HARNESS, run: (c) => runViewBench(c).then(asSection) },
  { name: 'secrets', title: 'Secret check in version commits (issue 15)', run: runSecretsSection },
  { name: 'hook', title: 'Hook events (issues 12, 23)', run: (c) => runHookBench(c).then(asSection) },
  { name: 'tool-writes', title: 'Tool events (issue 25)', run: (c) => runToolWriteBench(c).then(asSection) },
  { name: 'agent-notes', title: 'A prompt with a note (issue 23)', run: (c) => runAgentNotesBench(c).then(asSection) },
  { name: 'store', title: 'Durable state store', run: runStoreSection },
  { name: 'launcher', title: 'Hook launcher (issue 24)', run: (c) => runLauncherBench(c).then(asSection) },
  {
    name: 'turn-changes',
    title: 'Running turn changes (issue 24)',
    run: (c) => runTurnChangesBench(c).then(asSection),
  },
  { name: 'blame', title: 'Blame and hover (issue 26)', run: (c) => runBlameBench(c).then(asSection) },
  { name: 'large', title: 'Large repository (issue 36)', run: runLargeRepoBench },
];

const ROOT = path.resolve(__dirname, '..', '..');
const started = performance.now();

/** A runner's result as a section's: its markdown (a string, or `section` / `markdown`) and its goal rows. */
function asSection(
  result: string | { section?: string; markdown?: string; goals?: readonly GoalRow[] },
): SectionResult {
  if (typeof result === 'string') return { markdown: result };
  return { markdown: result.section ?? result.markdown ?? '', goals: result.goals };
}

async function runGitSection(context: BenchContext): Promise<SectionResult> {
  const { sections, goals } = await runGitBench({ ...context, only: context.gitParts });
  return { markdown: sections.join('\n'), goals };
}

async function runSecretsSection(context: BenchContext): Promise<SectionResult> {
  const { markdown, goal } = await runSecretsBench(context.workDir, context.quick, context.progress);
  return { markdown, goals: [{ id: '15.1', ...goal }] };
}

function sh(command: string, args: string[]): string {
  try {
    return execFileSync(command, args, { encoding: 'utf8' }).trim();
  } catch {
    return 'unknown';
  }
}

function loadAverage(): string {
  return os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(', ');
}

function progress(line: string): void {
  const seconds = ((performance.now() - started) / 1000).toFixed(0).padStart(4);
  process.stderr.write(`[bench ${seconds} s] ${line}\n`);
}

/** What a section came to: its result, its failure, or not yet run. */
type Outcome =
  | { kind: 'pending' }
  | { kind: 'done'; result: SectionResult; seconds: number; load: string }
  | { kind: 'failed'; error: string; seconds: number; load: string };

/** Installs the real-VS-Code harness (scripts/vscode/setup.sh, idempotent); returns why it failed, or null. */
function installHarness(): string | null {
  progress('installing what the Chromium section needs (scripts/vscode/setup.sh, idempotent)…');
  const r = spawnSync('bash', [path.join(ROOT, 'scripts/vscode/setup.sh')], {
    cwd: ROOT,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  process.stderr.write(`${r.stdout ?? ''}${r.stderr ?? ''}`);
  if (r.status === 0) return null;
  const said = `${r.stdout ?? ''}${r.stderr ?? ''}`.split('\n').filter(Boolean).slice(-6).join('\n');
  return `scripts/vscode/setup.sh failed (exit ${r.status ?? r.signal}); the last lines it printed:\n${said}`;
}

/** Which sections run, and which git parts: from AVH_BENCH_ONLY (names of sections or of git parts). */
function selection(): { sections: readonly BenchSection[]; gitParts?: string[] } {
  const names = process.env.AVH_BENCH_ONLY?.split(',').filter(Boolean);
  if (!names) return { sections: SECTIONS };
  const unknown = names.filter((n) => !SECTIONS.some((s) => s.name === n) && !GIT_PARTS.includes(n));
  if (unknown.length > 0)
    throw new Error(
      `AVH_BENCH_ONLY: unknown ${unknown.join(', ')}; sections: ${SECTIONS.map((s) => s.name).join(', ')}; ` +
        `git parts: ${GIT_PARTS.join(', ')}`,
    );
  const gitParts = names.filter((n) => GIT_PARTS.includes(n));
  return {
    sections: SECTIONS.filter((s) => names.includes(s.name) || (s.name === 'git' && gitParts.length > 0)),
    gitParts: gitParts.length > 0 ? gitParts : undefined,
  };
}

function goalsTable(goals: readonly GoalRow[]): string {
  const mark = (pass: boolean | null) => (pass === null ? 'info' : pass ? '**pass**' : '**FAIL**');
  return [
    '| # | measure | goal | measured (p50) | result |',
    '|---|---|---|---|---|',
    ...goals.map((g) => `| ${g.id} | ${g.measure} | ${g.goal} | ${g.measured} | ${mark(g.pass)} |`),
  ].join('\n');
}

function sectionMarkdown(section: BenchSection, outcome: Outcome): string {
  switch (outcome.kind) {
    case 'pending':
      return `## ${section.title}\n\n_Not run yet (this file is written again after every section)._\n`;
    case 'failed':
      return [
        `## ${section.title} — section failed`,
        '',
        `The \`${section.name}\` section failed after ${outcome.seconds.toFixed(0)} s (load average ${outcome.load}); ` +
          'the other sections ran as usual. Its error:',
        '',
        '```',
        outcome.error,
        '```',
        '',
      ].join('\n');
    case 'done':
      return [
        outcome.result.markdown.trimEnd(),
        '',
        `_The \`${section.name}\` section took ${outcome.seconds.toFixed(0)} s; load average (1, 5, 15 min) at its end: ` +
          `${outcome.load}._`,
        '',
      ].join('\n');
  }
}

function render(
  run: { date: string; quick: boolean; loadBefore: string; finished: boolean },
  sections: readonly BenchSection[],
  outcomes: ReadonlyMap<string, Outcome>,
): string {
  const goals = sections.flatMap((s) => {
    const o = outcomes.get(s.name);
    return o?.kind === 'done' ? [...(o.result.goals ?? [])] : [];
  });
  goals.sort((a, b) => a.id.localeCompare(b.id, 'en', { numeric: true }));
  const missing = sections.filter((s) => outcomes.get(s.name)?.kind !== 'done').map((s) => `\`${s.name}\``);
  const seconds = (performance.now() - started) / 1000;
  const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
  const header = [
    '# Benchmark results',
    '',
    `- Date: ${run.date}${run.quick ? ' — **QUICK MODE (tiny repositories, not the real figures)**' : ''}`,
    `- Machine: ${sh('nproc', [])} cores (\`nproc\`), ${cpu}, ${(os.totalmem() / 2 ** 30).toFixed(1)} GB memory, ` +
      `${os.type()} ${os.release()}`,
    `- ${sh('git', ['--version'])}; Node ${process.version}`,
    '- Command: `npm run bench` (= `npm run build && npm run compile && node out/bench/index.js`, which first runs ' +
      '`scripts/vscode/setup.sh` for the Chromium section), run from the repository root',
    `- Load average (1, 5, 15 min) at start: ${run.loadBefore}; ${run.finished ? 'at end' : 'now'}: ${loadAverage()}. ` +
      'Other processes (tests) may share this machine, so absolute times are noisy; ratios are measured alternately ' +
      'in the same loop. Each section ends with the load average at its end.',
    `- ${run.finished ? 'Whole run' : 'Running for'}: ${seconds.toFixed(0)} s` +
      (run.finished ? '' : ' — **this run has not finished; the sections below not run yet are marked so**'),
    '',
    '**How to read this.** Every figure compares the product with raw git doing the same job, measured in the ' +
      'same run on the same repository with the variants alternating in one loop (order swapped each ' +
      'repetition, state reset between them untimed), so machine load affects both sides alike; the ratio is the ' +
      'figure that matters, absolute milliseconds vary with the machine. Times are wall-clock in this Node process ' +
      'around one call, warm page cache, after one discarded warm-up; p50 is the median, p99 the nearest-rank 99th ' +
      'percentile (with fewer than 100 repetitions it is the slowest run). "Raw" means the same `git` command and ' +
      'nothing else, started exactly as the product starts its own git here: the same executable, through the same git ' +
      'launcher process (the extension host starts one; spawning from this large process would cost every raw command ' +
      'several milliseconds more, the cost the launcher exists to avoid). Git processes are counted with a PATH shim ' +
      '(a `git` script that logs its command line and execs the real git). Where a goal is missed, the section breaks ' +
      "the product's time down per git call (timed from send to answer in the bench) and shows what is left outside " +
      'git as the wall-clock union: git calls that run side by side count once, never a negative remainder.',
    '',
    '## Goals',
    '',
    goalsTable(goals),
    ...(missing.length > 0 ? ['', `Goals of sections without a result are missing: ${missing.join(', ')}.`] : []),
    '',
  ].join('\n');
  return [header, ...sections.map((s) => sectionMarkdown(s, outcomes.get(s.name) ?? { kind: 'pending' }))].join('\n');
}

/** One section, on its own: its result, or its failure (a thrown error, or the harness it needs is missing). */
async function runSection(
  section: BenchSection,
  context: BenchContext,
  harnessFailure: string | null,
): Promise<Outcome> {
  const t0 = performance.now();
  const ended = () => ({ seconds: (performance.now() - t0) / 1000, load: loadAverage() });
  if (section.needs === HARNESS && harnessFailure !== null)
    return { kind: 'failed', error: harnessFailure, ...ended() };
  try {
    return { kind: 'done', result: await section.run(context), ...ended() };
  } catch (error) {
    const text = error instanceof Error ? (error.stack ?? error.message) : String(error);
    progress(`section ${section.name} FAILED: ${text.split('\n')[0]}`);
    return { kind: 'failed', error: text, ...ended() };
  }
}

async function main(): Promise<void> {
  const quick = process.env.AVH_BENCH_QUICK === '1';
  const { sections, gitParts } = selection();
  const workRoot = path.join(ROOT, 'bench', '.work');
  const workDir = path.join(workRoot, `run-${process.pid}`);
  fs.mkdirSync(workDir, { recursive: true });
  const out =
    process.env.AVH_BENCH_ONLY !== undefined
      ? path.join(workRoot, 'RESULTS.only.md')
      : quick
        ? path.join(workRoot, 'RESULTS.quick.md')
        : path.join(ROOT, 'bench', 'RESULTS.md');
  const run = { date: new Date().toISOString(), quick, loadBefore: loadAverage(), finished: false };
  const outcomes = new Map<string, Outcome>();
  const write = () => {
    const markdown = render(run, sections, outcomes);
    fs.mkdirSync(path.dirname(out), { recursive: true });
    fs.writeFileSync(out, markdown.endsWith('\n') ? markdown : `${markdown}\n`);
    return markdown;
  };
  const harnessFailure = sections.some((s) => s.needs === HARNESS) ? installHarness() : null;
  // As in the extension host: every git of the product, and the raw baselines (benchUtil.ts git()), goes through the
  // git launcher (docs/design.md, "Starting git from a large process").
  const stopLauncher = startGitLauncher();
  try {
    if (!(await gitLauncherReady())) throw new Error('bench: the git launcher did not start');
    const context: BenchContext = { workDir, progress, quick, gitParts };
    for (const section of sections) {
      progress(`section ${section.name}…`);
      outcomes.set(section.name, await runSection(section, context, harnessFailure));
      write();
    }
  } finally {
    stopLauncher();
    fs.rmSync(workDir, { recursive: true, force: true });
    try {
      fs.rmdirSync(workRoot);
    } catch {
      /* other runs' folders, or not empty */
    }
  }
  run.finished = true;
  process.stdout.write(write());
  const failed = sections.filter((s) => outcomes.get(s.name)?.kind === 'failed').map((s) => s.name);
  progress(`wrote ${path.relative(ROOT, out)} in ${((performance.now() - started) / 1000).toFixed(0)} s`);
  if (failed.length > 0) {
    progress(`sections that failed (reported in ${path.relative(ROOT, out)}): ${failed.join(', ')}`);
    process.exitCode = 1;
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
