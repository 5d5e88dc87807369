/**
 * Hook event cost (issue 12): what an agent waits for on every prompt and every stop. The production CLI bundle
 * (dist/cli.js) runs as a new process per event, exactly as an agent's hook runs the command `connect` writes, on a
 * 2,000-file repository, alternating in one loop with the floor it cannot go below: the same Node start doing
 * nothing and one `git status`. The plain start (`node dist/cli.js hook …`) is measured beside it.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { hookCommand, hookEnvWords, shellWord } from '../src/cli/installation';
import { GoalRow } from './gitBench';
import { buildRepo, fmtRatio, GitProcessCounter, median, ms, percentile, verb } from './benchUtil';

const ROOT = path.resolve(__dirname, '..', '..');
const CLI = path.join(ROOT, 'dist', 'cli.js');
const SESSION = 'bench-session';
const GOAL_MS = 150;
const GOAL_RATIO = 1.3;

export interface HookBenchOptions {
  workDir: string;
  progress: (line: string) => void;
  quick: boolean;
}

function wall(
  command: string,
  args: readonly string[],
  cwd: string,
  input = '',
  env: NodeJS.ProcessEnv = process.env,
): number {
  const started = performance.now();
  const r = spawnSync(command, args, { cwd, input, env, stdio: ['pipe', 'ignore', 'pipe'] });
  const elapsed = performance.now() - started;
  if (r.status !== 0)
    throw new Error(
      `${path.basename(command)} ${args.join(' ')} exited ${r.status}: ${r.stderr.toString('utf8').slice(0, 400)}`,
    );
  return elapsed;
}

const event = (name: string, dir: string) =>
  JSON.stringify({
    hook_event_name: name,
    session_id: SESSION,
    cwd: dir,
    prompt: name === 'UserPromptSubmit' ? 'bench prompt' : undefined,
  });

export async function runHookBench(options: HookBenchOptions): Promise<{ goals: GoalRow[]; section: string }> {
  if (!fs.existsSync(CLI)) throw new Error('hook bench: dist/cli.js is missing (npm run build)');
  const files = options.quick ? 200 : 2_000;
  const reps = options.quick ? 5 : 21;
  const dir = path.join(options.workDir, 'hook-repo');
  options.progress(`hook: building a ${files.toLocaleString('en')}-file repository…`);
  await buildRepo(dir, files, 2_048);
  const begin = event('UserPromptSubmit', dir);
  const end = event('Stop', dir);
  // What an agent runs: the command `connect` writes (installation.ts, hookCommand), through a shell, as agents do.
  const installed = hookCommand('claude-code', { cliFile: CLI });
  const hook = (input: string) => wall('/bin/sh', ['-c', installed], dir, input);
  // The same CLI started plainly, as a hand-written `node …/dist/cli.js hook claude-code` would (its ratio has a goal row too).
  const plain = (input: string) => wall(process.execPath, [CLI, 'hook', 'claude-code'], dir, input);
  const times: Record<string, number[]> = {
    node: [],
    nodeInstalled: [],
    gitStatus: [],
    version: [],
    begin: [],
    turn: [],
    beginPlain: [],
    turnPlain: [],
  };
  const variants: Record<string, () => number> = {
    node: () => wall(process.execPath, ['-e', '0'], dir),
    // The floor of the installed command: the same shell and the same Node start, doing nothing.
    nodeInstalled: () =>
      wall('/bin/sh', ['-c', [...hookEnvWords(), process.execPath, '-e', '0'].map(shellWord).join(' ')], dir),
    gitStatus: () => wall('git', ['status', '--porcelain'], dir),
    version: () => wall(process.execPath, [CLI, '--version'], dir),
    // One turn: its begin then its end (nothing changed in between, so no version is made).
    turn: () => {
      times.begin.push(hook(begin));
      return hook(end);
    },
    turnPlain: () => {
      times.beginPlain.push(plain(begin));
      return plain(end);
    },
  };
  // Warm-up (page cache, the store created), then the timed loop; the order rotates every repetition.
  for (const fn of Object.values(variants)) fn();
  times.begin.length = 0;
  times.beginPlain.length = 0;
  const names = Object.keys(variants);
  options.progress(`hook: ${reps} alternating repetitions of node -e 0, git status, --version, hook begin + end…`);
  for (let i = 0; i < reps; i++) {
    const order = [...names.slice(i % names.length), ...names.slice(0, i % names.length)];
    for (const name of order) {
      const t = variants[name]();
      times[name].push(t);
    }
  }
  const endTimes = times.turn;
  const p50 = (values: number[]) => median(values);
  // Each command against the floor of its own Node start: the installed one against the same shell and env start.
  const floor = p50(times.nodeInstalled) + p50(times.gitStatus);
  const floorPlain = p50(times.node) + p50(times.gitStatus);
  const slower = Math.max(p50(times.begin), p50(endTimes));
  const slowerPlain = Math.max(p50(times.beginPlain), p50(times.turnPlain));
  const counter = new GitProcessCounter(options.workDir);
  const gitOf = async (input: string) => (await counter.count(async () => hook(input))).map((l) => verb(l.split(' ')));
  // Journal records per event, from the facts file both paths keep: 1 for the fast path's one record; the full
  // path writes 2 or more (the begin's two transactions; the end's outcome, then its version).
  const lastSeq = () =>
    (
      JSON.parse(fs.readFileSync(path.join(dir, '.git', 'agent-versions', 'hook-facts.json'), 'utf8')) as {
        journal: { lastSeq: number };
      }
    ).journal.lastSeq;
  const seq0 = lastSeq();
  const beginGit = await gitOf(begin);
  const seq1 = lastSeq();
  const endGit = await gitOf(end);
  const records = { begin: seq1 - seq0, end: lastSeq() - seq1 };

  const row = (id: string, measure: string, value: number, goal: string, pass: boolean | null): GoalRow => ({
    id,
    measure,
    goal,
    measured: `${ms(value)}`,
    pass,
  });
  const goals: GoalRow[] = [
    row(
      '12.1',
      `Hook event as \`connect\` installs it, prompt (turn begin), ${files.toLocaleString('en')} files`,
      p50(times.begin),
      `≤ ${GOAL_MS} ms`,
      p50(times.begin) <= GOAL_MS,
    ),
    row(
      '12.1',
      `Hook event as \`connect\` installs it, stop with no changes (turn end), ${files.toLocaleString('en')} files`,
      p50(endTimes),
      `≤ ${GOAL_MS} ms`,
      p50(endTimes) <= GOAL_MS,
    ),
    {
      id: '12.1',
      measure: 'Hook event (slower of begin/end) vs the same Node start doing nothing + one `git status`',
      goal: `≤ ${GOAL_RATIO}×`,
      measured: fmtRatio(slower / floor),
      pass: slower / floor <= GOAL_RATIO,
    },
    {
      id: '12.1',
      measure:
        'Hook event started plainly (`node dist/cli.js hook`, slower of begin/end) vs `node -e 0` + one `git status`',
      goal: `≤ ${GOAL_RATIO}×`,
      measured: fmtRatio(slowerPlain / floorPlain),
      pass: slowerPlain / floorPlain <= GOAL_RATIO,
    },
  ];
  const line = (label: string, values: number[]) =>
    `| ${label} | ${ms(p50(values))} | ${ms(percentile(values, 90))} | ${ms(Math.min(...values))} |`;
  const caCerts = process.env.NODE_EXTRA_CA_CERTS !== undefined;
  const section = [
    '## Hook events (issue 12)',
    '',
    `Each repetition runs, as new processes from this one in an order that rotates every repetition: \`node -e 0\`; ` +
      `the same through \`/bin/sh -c\` with the installed command's environment (\`${hookEnvWords().join(' ')} node -e 0\`); ` +
      `\`git status --porcelain\`; \`node dist/cli.js --version\` (Node start + loading the full CLI); and one turn's two hook ` +
      `events (UserPromptSubmit, then Stop with nothing changed, so no version) twice: through the command \`connect\` writes into ` +
      `an agent's settings, run by \`/bin/sh -c\` as agents run hooks (\`${hookEnvWords().join(' ')} <node> <dist/cli.js> hook claude-code\`), ` +
      `and started plainly (\`<node> dist/cli.js hook claude-code\`). On a ${files.toLocaleString('en')}-file repository (2 KB files, clean, ` +
      `committed). Wall time spawn → exit, ${reps} repetitions after one warm-up.`,
    '',
    '| process | p50 | p90 | min |',
    '|---|---:|---:|---:|',
    line('`node -e 0`', times.node),
    line(`\`sh -c '${hookEnvWords().join(' ')} node -e 0'\``, times.nodeInstalled),
    line('`git status --porcelain`', times.gitStatus),
    line('`agent-versions --version` (full CLI load)', times.version),
    line('hook as installed: UserPromptSubmit (turn begin)', times.begin),
    line('hook as installed: Stop, no changes (turn end)', endTimes),
    line('hook started plainly: turn begin', times.beginPlain),
    line('hook started plainly: turn end', times.turnPlain),
    '',
    caCerts
      ? `- This machine sets \`NODE_EXTRA_CA_CERTS\` for every process, so each plain Node start first reads and parses a CA bundle: ` +
        `${ms(p50(times.node) - p50(times.nodeInstalled))} of \`node -e 0\`'s ${ms(p50(times.node))}. The installed command starts Node without it ` +
        '(a hook makes no TLS connection of its own; src/cli/installation.ts, docs/design.md "Fast hook events").'
      : '- `NODE_EXTRA_CA_CERTS` is not set here, so both forms start Node alike.',
    `- Floors (the Node start + one \`git status\`): installed ${ms(floor)}, begin ${fmtRatio(p50(times.begin) / floor)}, end ${fmtRatio(p50(endTimes) / floor)} of it; ` +
      `plain ${ms(floorPlain)}, begin ${fmtRatio(p50(times.beginPlain) / floorPlain)}, end ${fmtRatio(p50(times.turnPlain) / floorPlain)} of it.`,
    `- Git processes per event: begin ${beginGit.length} (${beginGit.join(', ')}); end ${endGit.length} (${endGit.join(', ')}).`,
    `- Loading the full CLI costs ${ms(p50(times.version) - p50(times.node))} (\`--version\` − \`node -e 0\`: the entry, then dist/cliMain.js). ` +
      `Journal records per event: begin ${records.begin}, end ${records.end} (1 = the fast path, docs/design.md "Fast hook events": the small entry alone, no sql.js, ` +
      'the lease and store lock files, the status and one fsynced append; an event it declines pays the full CLI, sql.js and the store open).',
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
