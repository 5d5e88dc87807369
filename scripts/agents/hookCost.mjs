// Research tool for FINDINGS-agents.md (issue 23 #7): what one hook event of `agent-versions hook claude-code`
// costs, step by step, in the sequence real sessions produce — measured one process at a time (not inside an agent,
// so the agent's own load does not count). For each event: wall time of the shipped bundle (dist/cli.js), the path
// it took (fast or full, from the compiled sources' AVH_HOOK_PATH_LOG) and every git process it started, with its
// time (GIT_TRACE2_EVENT). Prints a table and writes the raw rows as JSON.
//   node scripts/agents/hookCost.mjs [--runs N] [--files N] [--out file.json]
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
const DIST_CLI = path.join(ROOT, 'dist', 'cli.js');
const arg = (name, dflt) => (process.argv.includes(name) ? process.argv[process.argv.indexOf(name) + 1] : dflt);
const RUNS = Number(arg('--runs', '5'));
const FILES = Number(arg('--files', '20'));
const OUT = arg('--out', null);

const gitEnv = { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_TERMINAL_PROMPT: '0' };
const git = (cwd, ...a) => execFileSync('git', a, { cwd, env: gitEnv, encoding: 'utf8' });

function makeRepo() {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'avh-hookcost-')));
  git(dir, 'init', '-q', '-b', 'main');
  git(dir, 'config', 'user.name', 'T');
  git(dir, 'config', 'user.email', 't@e');
  git(dir, 'config', 'commit.gpgsign', 'false');
  for (let i = 0; i < FILES; i++) {
    fs.mkdirSync(path.join(dir, `d${i % 10}`), { recursive: true });
    fs.writeFileSync(path.join(dir, `d${i % 10}`, `f${i}.txt`), `file ${i}\n`);
  }
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '-m', 'initial');
  return dir;
}

/** One hook event through the shipped bundle, as the connected command runs it (env -u NODE_EXTRA_CA_CERTS node dist/cli.js). */
function hook(repo, payload, traceFile) {
  const input = JSON.stringify({ cwd: repo, transcript_path: '/dev/null', ...payload });
  const t0 = process.hrtime.bigint();
  const r = spawnSync('env', ['-u', 'NODE_EXTRA_CA_CERTS', process.execPath, DIST_CLI, 'hook', 'claude-code'], {
    cwd: os.tmpdir(),
    input,
    encoding: 'utf8',
    env: { ...gitEnv, GIT_TRACE2_EVENT: traceFile },
  });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (r.status !== 0) throw new Error(`hook ${payload.hook_event_name} exited ${r.status}: ${r.stderr}`);
  return { ms, stdout: r.stdout };
}

/** git processes from a trace2 event file: argv and elapsed ms each. */
function gitProcesses(traceFile) {
  if (!fs.existsSync(traceFile)) return [];
  const bySid = new Map();
  for (const line of fs.readFileSync(traceFile, 'utf8').split('\n')) {
    if (!line) continue;
    const e = JSON.parse(line);
    const p = bySid.get(e.sid) ?? {};
    if (e.event === 'start') p.argv = e.argv.slice(1).join(' ');
    if (e.event === 'exit') p.ms = e.t_abs * 1000;
    bySid.set(e.sid, p);
  }
  fs.rmSync(traceFile);
  return [...bySid.values()].filter((p) => p.argv !== undefined);
}

const session = '11111111-2222-4333-8444-555555555555';
const steps = [
  [
    'prompt: first of a chat, dirty tree (user edit + untracked)',
    (repo) => {
      fs.appendFileSync(path.join(repo, 'd0', 'f0.txt'), 'user edit\n');
      fs.writeFileSync(path.join(repo, 'notes.txt'), 'untracked\n');
    },
    { hook_event_name: 'UserPromptSubmit', session_id: session, prompt: 'make the edits' },
  ],
  [
    'Stop that makes a version (2 files written)',
    (repo) => {
      fs.writeFileSync(path.join(repo, 'added.txt'), 'added\n');
      fs.appendFileSync(path.join(repo, 'd1', 'f1.txt'), 'agent edit\n');
    },
    { hook_event_name: 'Stop', session_id: session, stop_hook_active: false },
  ],
  [
    'prompt: known chat, clean tree',
    () => {},
    { hook_event_name: 'UserPromptSubmit', session_id: session, prompt: 'explain' },
  ],
  ['Stop, nothing changed', () => {}, { hook_event_name: 'Stop', session_id: session, stop_hook_active: false }],
  [
    'prompt: known chat, clean tree (then interrupted)',
    () => {},
    { hook_event_name: 'UserPromptSubmit', session_id: session, prompt: 'long one' },
  ],
  [
    'prompt that first ends the interrupted turn (partial work in the tree)',
    (repo) => {
      fs.writeFileSync(path.join(repo, 'partial.txt'), 'half\n');
    },
    { hook_event_name: 'UserPromptSubmit', session_id: session, prompt: 'never mind' },
  ],
  [
    'Stop, nothing changed since that prompt',
    () => {},
    { hook_event_name: 'Stop', session_id: session, stop_hook_active: false },
  ],
  ['SessionEnd, no running turn', () => {}, { hook_event_name: 'SessionEnd', session_id: session, reason: 'other' }],
];

const rows = [];
const node0 = [];
for (let run = 0; run < RUNS; run++) {
  const t0 = process.hrtime.bigint();
  spawnSync(process.execPath, ['-e', '']);
  node0.push(Number(process.hrtime.bigint() - t0) / 1e6);
  const repo = makeRepo();
  const trace = path.join(repo, '..', `${path.basename(repo)}.trace`);
  for (const [name, prepare, payload] of steps) {
    prepare(repo);
    const { ms } = hook(repo, payload, trace);
    const procs = gitProcesses(trace);
    rows.push({ run, step: name, ms, git: procs.length, gitMs: procs.reduce((s, p) => s + (p.ms ?? 0), 0), procs });
  }
  fs.rmSync(repo, { recursive: true, force: true });
}

const median = (a) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];
console.log(
  `node -e '' (bare Node start): median ${median(node0).toFixed(0)} ms; load ${os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}; ${os.cpus().length} cores; ${FILES} files`,
);
console.log('step'.padEnd(72), 'median ms', ' git procs', ' git ms (sum)');
for (const [name] of steps) {
  const r = rows.filter((x) => x.step === name);
  console.log(
    name.padEnd(72),
    median(r.map((x) => x.ms))
      .toFixed(0)
      .padStart(9),
    String(median(r.map((x) => x.git))).padStart(10),
    median(r.map((x) => x.gitMs))
      .toFixed(0)
      .padStart(13),
  );
}
const last = rows.filter((x) => x.run === RUNS - 1);
for (const r of last) {
  console.log(`\n${r.step} (last run, ${r.ms.toFixed(0)} ms):`);
  for (const p of r.procs) console.log(`  ${(p.ms ?? NaN).toFixed(1).padStart(7)} ms  git ${p.argv.slice(0, 110)}`);
}
if (OUT) fs.writeFileSync(OUT, JSON.stringify({ node0, rows, load: os.loadavg() }, null, 2));
