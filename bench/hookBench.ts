/**
 * Hook event cost (issues 12 and 23): what an agent waits for on every prompt and every stop, in the four cases real
 * sessions hit — a prompt on a clean tree, a prompt that first ends an interrupted turn (its partial work still in
 * the tree), a Stop with no change, and a Stop that makes a version (100 of 2,000 files changed). Each event runs
 * as an agent runs it: the command `connect <agent>` writes (installation.ts hookCommand: `env -u … node dist/cli.js
 * hook <agent>`) through `/bin/sh -c`, with that agent's payload and environment, a new process per event, on a
 * 2,000-file repository — for Claude Code, Codex, Copilot CLI and Gemini CLI in turn. Each row alternates with
 * its floor, started the same way (`/bin/sh -c`, the same env prefix, the same Node) in a twin repository: a Node
 * start that runs the raw git commands doing the same job and nothing else. Setup between runs (beginning the turn,
 * editing files, resetting) is untimed.
 */
import { randomUUID } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { hookCommand, hookEnvWords, shellWord } from '../src/cli/installation';
import { GoalRow } from './gitBench';
import {
  BenchRepo,
  buildRepo,
  fmtRatio,
  GitProcessCounter,
  median,
  ms,
  percentile,
  pickFiles,
  verb,
} from './benchUtil';

const ROOT = path.resolve(__dirname, '..', '..');
const CLI = path.join(ROOT, 'dist', 'cli.js');
/**
 * The test build of the same bundles (scripts/build.mjs), which logs the path each hook event took
 * (AVH_HOOK_PATH_LOG): run only for the untimed, counted event of each row, to name its path.
 */
const TEST_BUILD_CLI = path.join(ROOT, 'dist', 'test-extension', 'dist', 'cli.js');
const SESSION = 'bench-session';
const GOAL_RATIO = 1.3;

export interface HookBenchOptions {
  workDir: string;
  progress: (line: string) => void;
  quick: boolean;
}

/** Wall time of one process, spawn → exit; a failure stops the bench (a hook that fails measures nothing). */
function wall(command: string, args: readonly string[], cwd: string, input = '', env: NodeJS.ProcessEnv = {}): number {
  const started = performance.now();
  const r = spawnSync(command, args, {
    cwd,
    input,
    env: { ...process.env, ...env },
    stdio: ['pipe', 'ignore', 'pipe'],
  });
  const elapsed = performance.now() - started;
  if (r.status !== 0)
    throw new Error(`${path.basename(command)} ${args.join(' ')} exited ${r.status}: ${r.stderr.toString('utf8')}`);
  return elapsed;
}

/**
 * An agent as the bench drives it: the command `connect` writes for it, its begin and end events, and what its
 * payload and environment add. Opencode is not here: its plugin runs this same command per event, from inside
 * opencode's own process (the cost of its spawn is opencode's).
 */
interface BenchAgent {
  /** The agent as named in `connect <agent>` / `hook <agent>`, and in the table. */
  name: string;
  label: string;
  begin: string;
  end: string;
  /** More fields of the end event's payload (Gemini's AfterAgent carries the answer). */
  endFields?: Record<string, string>;
  /** The hook process's environment as the agent sets it (Copilot CLI: COPILOT_CLI=1). */
  env: NodeJS.ProcessEnv;
}

const AGENTS: readonly BenchAgent[] = [
  { name: 'claude-code', label: 'Claude Code', begin: 'UserPromptSubmit', end: 'Stop', env: { COPILOT_CLI: '' } },
  { name: 'codex', label: 'Codex', begin: 'UserPromptSubmit', end: 'Stop', env: {} },
  { name: 'copilot', label: 'Copilot CLI', begin: 'UserPromptSubmit', end: 'Stop', env: { COPILOT_CLI: '1' } },
  {
    name: 'gemini',
    label: 'Gemini CLI',
    begin: 'BeforeAgent',
    end: 'AfterAgent',
    endFields: { prompt_response: 'done' },
    env: {},
  },
];

type Phase = 'begin' | 'end';

const payload = (agent: BenchAgent, phase: Phase, dir: string) =>
  JSON.stringify({
    hook_event_name: phase === 'begin' ? agent.begin : agent.end,
    session_id: `${SESSION}-${agent.name}`,
    cwd: dir,
    ...(phase === 'begin' ? { prompt: 'bench prompt' } : (agent.endFields ?? {})),
    // The ids a begin records as the turn's place in the conversation (issue 32): Claude Code's prompt_id and
    // session file, Codex's turn_id.
    prompt_id: randomUUID(),
    turn_id: randomUUID(),
    transcript_path: path.join(dir, '.bench-home', 'projects', 'bench', `${SESSION}-${agent.name}.jsonl`),
  });

/**
 * The floor's job, as one small script a fresh Node runs: exactly the git commands that do what the hook event does,
 * one after another. `status`: is anything to record (a prompt on a clean tree, a Stop with no change). `snapshot`:
 * keep the working tree as a commit without touching HEAD, the index or the files (what a begin on a dirty tree
 * does): a copy of the index (so its stat data stays valid), `add -A` into it, `write-tree`, `commit-tree`,
 * `update-ref`. `commit`: make the changes a commit on the branch (`add -A`, `commit`).
 */
const RAW_GIT = `const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const git = (args, env = {}) => {
  const r = spawnSync('git', args, { env: { ...process.env, ...env }, encoding: 'utf8' });
  if (r.status !== 0) throw new Error('git ' + args.join(' ') + ': ' + r.stderr);
  return r.stdout.trim();
};
const mode = process.argv[2];
git(['status', '--porcelain']);
if (mode === 'snapshot') {
  const index = path.join('.git', 'bench-snapshot-index');
  fs.copyFileSync(path.join('.git', 'index'), index);
  const env = { GIT_INDEX_FILE: index };
  git(['add', '-A'], env);
  const tree = git(['write-tree'], env);
  const commit = git(['commit-tree', tree, '-p', 'HEAD', '-m', 'snapshot']);
  git(['update-ref', 'refs/bench/snapshot', commit]);
  fs.rmSync(index);
}
if (mode === 'commit') {
  git(['add', '-A']);
  git(['commit', '-q', '-m', 'bench version']);
}
`;

interface Row {
  id: string;
  event: string;
  /** The git work of its floor (RAW_GIT's mode). */
  raw: 'status' | 'snapshot' | 'commit';
  /** Untimed, before each timed event: brings both repositories into the row's state. */
  before: (twin: Twin) => void;
  /** The timed event. */
  phase: Phase;
  /** Untimed, after it. */
  after: (twin: Twin) => void;
}

interface Twin {
  hooked: BenchRepo;
  raw: BenchRepo;
  /** Runs one hook event of the agent in the hooked repository, as connect installs it; its wall time. */
  hook: (phase: Phase) => number;
  /** Appends a line to `files` in both repositories (a turn's edits). */
  edit: (files: readonly string[], tag: string) => void;
  /** Puts both working trees back to their HEAD (nothing staged, nothing untracked), untimed. */
  clean: () => void;
}

interface Measured {
  agent: BenchAgent;
  row: Row;
  hook: number[];
  floor: number[];
  git: string[];
  records: number;
  /** 'fast', or 'full (declined:<reason>)' (the test build's path log). */
  path: string;
}

export async function runHookBench(options: HookBenchOptions): Promise<{ goals: GoalRow[]; section: string }> {
  if (!fs.existsSync(CLI)) throw new Error('hook bench: dist/cli.js is missing (npm run build)');
  const files = options.quick ? 200 : 2_000;
  const reps = options.quick ? 5 : 25;
  options.progress(`hook: building two ${files.toLocaleString('en')}-file repositories…`);
  const hooked = await buildRepo(path.join(options.workDir, 'hook-repo'), files, 2_048);
  const raw = await buildRepo(path.join(options.workDir, 'raw-repo'), files, 2_048);
  const script = path.join(options.workDir, 'raw-git.js');
  fs.writeFileSync(script, RAW_GIT);
  // The floor through the same shell, env prefix and Node as the hook command.
  const floorCommand = (mode: string) => [...hookEnvWords(), process.execPath, script, mode].map(shellWord).join(' ');
  const changed = pickFiles(hooked, options.quick ? 50 : 100);
  const partial = changed.slice(0, 10);
  const gitIn = (dir: string, ...args: string[]) => {
    const r = spawnSync('git', args, { cwd: dir, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
  };
  const counter = new GitProcessCounter(options.workDir);
  const factsFile = path.join(hooked.dir, '.git', 'agent-versions', 'hook-facts.json');
  const lastSeq = () =>
    (JSON.parse(fs.readFileSync(factsFile, 'utf8')) as { journal: { lastSeq: number } }).journal.lastSeq;
  let seq = 0;
  const rows: Row[] = [
    {
      id: 'prompt-clean',
      event: 'prompt on a clean tree (a known chat, no turn running)',
      raw: 'status',
      before: () => undefined,
      phase: 'begin',
      after: (t) => void t.hook('end'),
    },
    {
      id: 'prompt-interrupted',
      event: 'prompt that first ends an interrupted turn (its 10 changed files still in the tree)',
      raw: 'snapshot',
      before: (t) => {
        t.hook('begin');
        t.edit(partial, `partial ${++seq}`);
      },
      phase: 'begin',
      after: (t) => {
        t.hook('end');
        t.clean();
      },
    },
    {
      id: 'stop-unchanged',
      event: 'Stop with no change (clean tree)',
      raw: 'status',
      before: (t) => void t.hook('begin'),
      phase: 'end',
      after: () => undefined,
    },
    {
      id: 'stop-version',
      event: `Stop that makes a version (${changed.length} of ${files.toLocaleString('en')} files changed)`,
      raw: 'commit',
      before: (t) => {
        t.hook('begin');
        t.edit(changed, `version ${++seq}`);
      },
      phase: 'end',
      after: () => undefined,
    },
  ];

  const measured: Measured[] = [];
  for (const agent of AGENTS) {
    // What the agent runs, through a shell as agents do.
    const installed = hookCommand(agent.name, { cliFile: CLI });
    const twin: Twin = {
      hooked,
      raw,
      hook: (phase) => wall('/bin/sh', ['-c', installed], hooked.dir, payload(agent, phase, hooked.dir), agent.env),
      edit: (list, tag) => {
        for (const repo of [hooked, raw])
          for (const rel of list) fs.appendFileSync(path.join(repo.dir, rel), `${tag}\n`);
      },
      clean: () => {
        for (const repo of [hooked, raw]) {
          gitIn(repo.dir, 'checkout', '-q', '--', '.');
          gitIn(repo.dir, 'clean', '-fdq');
        }
      },
    };
    const results = rows.map((row) => ({ agent, row, hook: [] as number[], floor: [] as number[] }));
    const runRow = (index: number, timed: boolean) => {
      const row = rows[index];
      row.before(twin);
      // The two alternate which goes first, so neither always finds the page cache warmed by the other.
      const floor = () => wall('/bin/sh', ['-c', floorCommand(row.raw)], raw.dir);
      let hookMs: number;
      let floorMs: number;
      if (seq % 2 === 0) {
        hookMs = twin.hook(row.phase);
        floorMs = floor();
      } else {
        floorMs = floor();
        hookMs = twin.hook(row.phase);
      }
      row.after(twin);
      if (timed) {
        results[index].hook.push(hookMs);
        results[index].floor.push(floorMs);
      }
      seq++;
    };
    // Warm-up: the store created, the chat known to the facts file (a known chat's prompt can take the fast path).
    twin.hook('begin');
    twin.hook('end');
    rows.forEach((_, i) => runRow(i, false));
    options.progress(`hook: ${agent.label}: ${reps} repetitions of the four hook events, each beside its floor…`);
    for (let r = 0; r < reps; r++) rows.forEach((_, i) => runRow(i, true));
    // One more of each, counted, through the test build of the same bundles (untimed): the git processes the hook
    // started, the journal records it wrote, and the path it took (the test build's path log).
    const testBuild = hookCommand(agent.name, { cliFile: TEST_BUILD_CLI });
    for (const [i, row] of rows.entries()) {
      row.before(twin);
      const seq0 = lastSeq();
      const log = path.join(options.workDir, `hook-path-${agent.name}-${row.id}.log`);
      fs.rmSync(log, { force: true });
      const lines = await counter.count(async () =>
        wall('/bin/sh', ['-c', testBuild], hooked.dir, payload(agent, row.phase, hooked.dir), {
          ...agent.env,
          AVH_HOOK_PATH_LOG: log,
        }),
      );
      const taken = fs.existsSync(log) ? fs.readFileSync(log, 'utf8').trim() : 'unknown';
      measured.push({
        ...results[i],
        git: lines.map((l) => verb(l.split(' '))),
        records: lastSeq() - seq0,
        path: taken.startsWith('fast') ? 'fast' : `full (${taken})`,
      });
      row.after(twin);
    }
  }

  const ratioOf = (m: Measured) => median(m.hook) / median(m.floor);
  const goals: GoalRow[] = measured.map((m) => ({
    id: '23.7',
    measure:
      `${m.agent.label} hook event as \`connect\` installs it, ${m.row.event}, ` +
      'vs its floor (same start + raw git doing the job)',
    goal: `≤ ${GOAL_RATIO}×`,
    measured: `${fmtRatio(ratioOf(m))} (${ms(median(m.hook))} vs ${ms(median(m.floor))})`,
    pass: ratioOf(m) <= GOAL_RATIO,
  }));
  const line = (m: Measured) =>
    `| ${m.agent.label} | ${m.row.event} | ${ms(median(m.hook))} | ${ms(percentile(m.hook, 90))} | ` +
    `${ms(median(m.floor))} | ${fmtRatio(ratioOf(m))} | ${m.path}, ${m.records} record${m.records === 1 ? '' : 's'} | ` +
    `${m.git.length}: ${m.git.join(', ')} |`;
  const prefix = hookEnvWords().join(' ');
  const section = [
    '## Hook events (issues 12, 23)',
    '',
    `Each event runs as an agent runs it: \`/bin/sh -c '${prefix} <node> <dist/cli.js> hook <agent>'\` (the command ` +
      "`connect <agent>` writes) with the agent's JSON on stdin and its environment (Copilot CLI: `COPILOT_CLI=1`), " +
      `a new process each time, on a ${files.toLocaleString('en')}-file repository (2 KB files). Beside each run, ` +
      'alternating which goes first, its floor runs in a twin repository in the same state: ' +
      `\`/bin/sh -c '${prefix} <node> raw-git.js <job>'\`, a fresh Node that runs only the raw git commands doing ` +
      'the same job (`status`: `git status`; `snapshot`: `git status`, then a copy of the index, `add -A`, ' +
      '`write-tree`, `commit-tree`, `update-ref`; `commit`: `git status`, `add -A`, `commit`). Setup between runs ' +
      `(beginning the turn, editing the files, resetting the tree) is untimed. ${reps} repetitions per agent after ` +
      "one warm-up. Gemini CLI's events are BeforeAgent and AfterAgent; opencode's plugin runs the same command.",
    '',
    '| agent | event | hook p50 | hook p90 | floor p50 | ratio | path, journal records | git processes of the hook |',
    '|---|---|---:|---:|---:|---:|---|---|',
    ...measured.map(line),
    '',
  ].join('\n');
  return { goals, section };
}

if (require.main === module) {
  const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'avh-hook-bench-'));
  runHookBench({ workDir, progress: (l) => process.stderr.write(`${l}\n`), quick: process.env.AVH_BENCH_QUICK === '1' })
    .then((r) =>
      process.stdout.write(
        `${r.section}\n${r.goals.map((g) => `${g.measure}: ${g.measured} (${g.goal})`).join('\n')}\n`,
      ),
    )
    .finally(() => fs.rmSync(workDir, { recursive: true, force: true }));
}
