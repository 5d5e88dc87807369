/**
 * `npm run bench`: every benchmark section in one run. Prints markdown and writes bench/RESULTS.md.
 * AVH_BENCH_QUICK=1 runs tiny repositories with few repetitions (for working on the bench itself) and writes
 * bench/.work/RESULTS.quick.md instead. AVH_BENCH_ONLY=undo,revert,health runs only those git sections on the medium
 * repository (for working on one part) and writes bench/.work/RESULTS.only.md.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { gitLauncherReady, startGitLauncher } from '../src/core/git/gitLauncher';
import { GoalRow, runGitBench } from './gitBench';
import { runStoreBench } from './storeBench';
import { runSecretsBench } from './secretsBench';
import { runViewBench } from './viewBench';
import { runHookBench } from './hookBench';

const ROOT = path.resolve(__dirname, '..', '..');
const COMMAND = 'npm run bench';

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

const started = performance.now();

/**
 * The store benchmark's markdown (runStoreBench() from bench/storeBench.ts), run through that module's own entry
 * point in a new Node process: sql.js's wasm memory never shrinks, so running it here would leave this process
 * larger (and every later fork slower), and it measures wasm initialization cold, as the CLI sees it.
 * Falls back to calling runStoreBench() in this process if the child fails to start.
 */
async function storeSection(): Promise<string> {
  const script = path.join(__dirname, 'storeBench.js');
  try {
    return execFileSync(process.execPath, [script], {
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
  } catch (error) {
    progress(
      `store bench child process failed (${error instanceof Error ? error.message.split('\n')[0] : String(error)}); running it in this process`,
    );
    return runStoreBench();
  }
}

/** Reads the store goals (issue 2) out of the store section's table, by column name. */
function storeGoals(markdown: string): GoalRow[] {
  const lines = markdown.split('\n').filter((l) => l.startsWith('|'));
  const header = lines[0]?.split('|').map((c) => c.trim()) ?? [];
  const col = (name: RegExp) => header.findIndex((c) => name.test(c));
  const p50 = col(/^write p50$/);
  const p99 = col(/^write p99$/);
  const open = col(/open/);
  const cell = (turns: string, index: number): number => {
    const row = lines.find((l) => l.split('|')[1]?.trim() === turns);
    const text = row?.split('|')[index]?.trim() ?? '';
    const match = /([\d.]+)\s*ms/.exec(text);
    return match ? Number(match[1]) : NaN;
  };
  const row = (measure: string, goalMs: number | null, value: number, extra = ''): GoalRow => ({
    id: '2.4',
    measure,
    goal: goalMs === null ? '—' : `≤ ${goalMs} ms`,
    measured: Number.isFinite(value) ? `${value} ms${extra}` : 'see the store section',
    pass: goalMs === null || !Number.isFinite(value) ? null : value <= goalMs,
  });
  const p99At = (turns: string) => (p99 > 0 ? `, p99 ${cell(turns, p99)} ms` : '');
  return [
    row('Durable turn write p50, 1k turns', null, cell('1,000', p50), p99At('1,000')),
    row('Durable turn write p50, 10k turns', 5, cell('10,000', p50), p99At('10,000')),
    row('Durable turn write p50, 100k turns', 20, cell('100,000', p50), p99At('100,000')),
    row('Store load (open in a new process), 100k turns', 150, open > 0 ? cell('100,000', open) : NaN),
  ];
}

function goalsTable(goals: readonly GoalRow[]): string {
  const mark = (pass: boolean | null) => (pass === null ? 'info' : pass ? '**pass**' : '**FAIL**');
  return [
    '| # | measure | goal | measured (p50) | result |',
    '|---|---|---|---|---|',
    ...goals.map((g) => `| ${g.id} | ${g.measure} | ${g.goal} | ${g.measured} | ${mark(g.pass)} |`),
  ].join('\n');
}

async function main(): Promise<void> {
  const quick = process.env.AVH_BENCH_QUICK === '1';
  const only = process.env.AVH_BENCH_ONLY ? process.env.AVH_BENCH_ONLY.split(',') : undefined;
  const workRoot = path.join(ROOT, 'bench', '.work');
  const workDir = path.join(workRoot, `run-${process.pid}`);
  fs.mkdirSync(workDir, { recursive: true });
  const loadBefore = loadAverage();
  const date = new Date().toISOString();
  let gitResult: Awaited<ReturnType<typeof runGitBench>>;
  let storeMarkdown: string;
  let viewResult: Awaited<ReturnType<typeof runViewBench>>;
  let secretsResult: Awaited<ReturnType<typeof runSecretsBench>>;
  let hookResult: Awaited<ReturnType<typeof runHookBench>>;
  // As in the extension host: runGit's commands go through the git launcher (docs/design.md, "Starting git from a
  // large process"). Raw git in the comparisons is spawned from this process, as before.
  const stopLauncher = startGitLauncher();
  if (!(await gitLauncherReady())) throw new Error('bench: the git launcher did not start');
  try {
    gitResult = await runGitBench({ workDir, progress, quick, only });
    if (only) {
      const markdown = [goalsTable(gitResult.goals), ...gitResult.sections].join('\n');
      const out = path.join(workRoot, 'RESULTS.only.md');
      fs.writeFileSync(out, markdown);
      process.stdout.write(markdown);
      return;
    }
    viewResult = await runViewBench({ workDir, progress, quick });
    secretsResult = await runSecretsBench(workDir, quick, progress);
    hookResult = await runHookBench({ workDir, progress, quick });
    progress('durable store (in its own Node process)…');
    storeMarkdown = await storeSection();
  } finally {
    stopLauncher();
    fs.rmSync(workDir, { recursive: true, force: true });
    try {
      fs.rmdirSync(workRoot);
    } catch {
      /* other runs' folders, or not empty */
    }
  }
  const loadAfter = loadAverage();
  const totalSeconds = (performance.now() - started) / 1000;
  const goals = [
    ...gitResult.goals,
    ...viewResult.goals,
    ...hookResult.goals,
    { id: '15.1', ...secretsResult.goal },
    ...storeGoals(storeMarkdown),
  ];
  goals.sort((a, b) => a.id.localeCompare(b.id, 'en', { numeric: true }));

  const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
  const header = [
    '# Benchmark results',
    '',
    `- Date: ${date}${quick ? ' — **QUICK MODE (tiny repositories, not the real figures)**' : ''}`,
    `- Machine: ${sh('nproc', [])} cores (\`nproc\`), ${cpu}, ${(os.totalmem() / 2 ** 30).toFixed(1)} GB memory, ${os.type()} ${os.release()}`,
    `- ${sh('git', ['--version'])}; Node ${process.version}`,
    `- Command: \`${COMMAND}\` (= \`npm run build && npm run compile && node out/bench/index.js\`), run from the repository root`,
    `- Load average (1, 5, 15 min) at start: ${loadBefore}; at end: ${loadAfter}. Other processes (tests) may share this machine, so absolute times are noisy; ratios are measured alternately in the same loop.`,
    `- Whole run: ${totalSeconds.toFixed(0)} s`,
    '',
    '**How to read this.** Every figure compares the product with raw git doing the same job, measured in the ' +
      'same run on the same repository with the two variants alternating in one loop (order swapped each ' +
      'repetition, state reset between them untimed), so machine load affects both sides alike; the ratio is the ' +
      'figure that matters, absolute milliseconds vary with the machine. Times are wall-clock in this Node process ' +
      'around one call, warm page cache, after one discarded warm-up; p50 is the median, p99 the nearest-rank 99th ' +
      'percentile (with fewer than 100 repetitions it is the slowest run). "Raw" means `git` spawned directly from ' +
      'this process (no shell). Git processes are counted with a PATH shim (a `git` script that logs its command line ' +
      "and execs the real git). Where a goal is missed, the section breaks the product's time down per git call " +
      '(timed spawn → close by wrapping `child_process.spawn` in the bench) and shows what is left outside git.',
    '',
    '## Goals',
    '',
    goalsTable(goals),
    '',
  ].join('\n');
  const markdown = [
    header,
    ...gitResult.sections,
    viewResult.section,
    secretsResult.markdown,
    hookResult.section,
    storeMarkdown,
  ].join('\n');
  const out = quick ? path.join(workRoot, 'RESULTS.quick.md') : path.join(ROOT, 'bench', 'RESULTS.md');
  fs.mkdirSync(path.dirname(out), { recursive: true });
  fs.writeFileSync(out, markdown.endsWith('\n') ? markdown : `${markdown}\n`);
  process.stdout.write(markdown);
  progress(`wrote ${path.relative(ROOT, out)} in ${totalSeconds.toFixed(0)} s`);
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
