/**
 * A large repository (issue 36): what a user of a 250,000-file repository waits for on each event of a turn, beside
 * one `git status --porcelain` on the same tree. Every event runs as the user's agent or the user runs it — the
 * shipped `dist/cli.js` in a new process (hook events with Claude Code's payload on stdin, through the command
 * `connect` writes; Undo, Redo and Undo Only This Turn as `agent-versions undo|redo …`) — alternating with the status
 * (which goes first swaps each repetition), 50 files changed per turn. The same rows again with
 * `core.untrackedCache=true`. Each event's and each status's peak RSS is read by `/usr/bin/time -f %M`, and one more
 * run of each event, untimed, names its git processes with their wall time (a PATH shim).
 *
 * The repository is built once and kept in bench/.work/large-<files> (the next run resets it to its first commit and
 * drops our state); AVH_BENCH_LARGE_FILES sets the file count (default 250,000), AVH_BENCH_LARGE_REPS the
 * repetitions (default 5).
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { hookCommand, hookEnvWords, shellWord } from '../src/cli/installation';
import type { BenchContext, GoalRow, SectionResult } from './benchSection';
import { buildRepo, fmtRatio, median, ms, pickFiles } from './benchUtil';

const ROOT = path.resolve(__dirname, '..', '..');
const CLI = path.join(ROOT, 'dist', 'cli.js');
const TIME = '/usr/bin/time';
const CHANGED = 50;

interface Run {
  ms: number;
  rssKb: number;
}

/** Runs `command` through `/bin/sh -c` under /usr/bin/time: wall time and peak RSS (kB); a failure stops the bench. */
function measure(command: string, cwd: string, input = '', env: NodeJS.ProcessEnv = {}): Run {
  const rssFile = path.join(os.tmpdir(), `avh-large-rss-${process.pid}`);
  const started = performance.now();
  const r = spawnSync(TIME, ['-f', '%M', '-o', rssFile, '/bin/sh', '-c', command], {
    cwd,
    input,
    env: { ...process.env, ...env },
    stdio: ['pipe', 'ignore', 'pipe'],
  });
  const elapsed = performance.now() - started;
  if (r.status !== 0) throw new Error(`large: \`${command}\` exited ${r.status}: ${r.stderr.toString('utf8')}`);
  const rssKb = Number(fs.readFileSync(rssFile, 'utf8').trim().split('\n').pop());
  fs.rmSync(rssFile, { force: true });
  return { ms: elapsed, rssKb };
}

function gitIn(dir: string, ...args: string[]): string {
  const r = spawnSync('git', args, { cwd: dir, encoding: 'utf8', maxBuffer: 1 << 28 });
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
  return r.stdout.trim();
}

/** The cached repository of `files` files (built on first use), reset to its first commit without our state. */
async function largeRepo(context: BenchContext, files: number): Promise<{ dir: string; changed: string[] }> {
  const dir = path.join(ROOT, 'bench', '.work', `large-${files}`);
  const marker = path.join(dir, '.git', 'avh-bench-base');
  if (!fs.existsSync(marker)) {
    context.progress(`large: building a ${files.toLocaleString('en')}-file repository (kept in ${dir})…`);
    const built = await buildRepo(dir, files, 256);
    fs.writeFileSync(marker, `${built.base}\n${built.files.join('\n')}\n`);
  }
  const [base, ...tracked] = fs.readFileSync(marker, 'utf8').trim().split('\n');
  context.progress(`large: resetting the ${files.toLocaleString('en')}-file repository…`);
  fs.rmSync(path.join(dir, '.git', 'agent-versions'), { recursive: true, force: true });
  for (const ref of gitIn(dir, 'for-each-ref', '--format=%(refname)', 'refs/agent-versions').split('\n'))
    if (ref) gitIn(dir, 'update-ref', '-d', ref);
  spawnSync('git', ['config', '--unset-all', 'core.untrackedCache'], { cwd: dir }); // exits 5 when not set
  gitIn(dir, 'reset', '-q', '--hard', base);
  gitIn(dir, 'clean', '-fdq');
  gitIn(dir, 'reflog', 'expire', '--expire=now', '--all');
  const repo = { dir, files: tracked, base, fileBytes: 256, totalBytes: 0, buildMs: { writeAndImport: 0, index: 0 } };
  return { dir, changed: pickFiles(repo, CHANGED) };
}

interface Row {
  id: string;
  event: string;
  /** Untimed, before the event: brings the repository into the row's state. */
  before: () => void;
  /** The timed event's command and stdin. */
  command: () => { command: string; input: string };
  after: () => void;
  goal: number;
}

interface Measured {
  row: Row;
  event: Run[];
  status: Run[];
  calls: string[];
}

/** A `git` first on PATH that logs each process's arguments and wall time, then runs the real git. */
function gitShim(workDir: string): { pathEnv: string; log: string } {
  const dir = path.join(workDir, 'large-git-shim');
  const log = path.join(workDir, 'large-git-shim.log');
  fs.mkdirSync(dir, { recursive: true });
  const realGit = spawnSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).stdout.trim();
  fs.writeFileSync(
    path.join(dir, 'git'),
    `#!/bin/sh\nt0=$(date +%s%N)\n"${realGit}" "$@"\nrc=$?\nt1=$(date +%s%N)\n` +
      `printf '%s ms\\t%s\\n' "$(( (t1 - t0) / 1000000 ))" "$*" >> "${log}"\nexit $rc\n`,
    { mode: 0o755 },
  );
  return { pathEnv: `${dir}${path.delimiter}${process.env.PATH ?? ''}`, log };
}

/** Drops our pinned `-c` pairs from a logged command line, so the verb and its own options show. */
function callLine(line: string): string {
  const [time, args] = line.split('\t');
  const words = args.split(' ');
  const out: string[] = [];
  for (let i = 0; i < words.length; i++) {
    if (words[i] === '-c') i++;
    else out.push(words[i]);
  }
  return `${out.slice(0, 4).join(' ')}${out.length > 4 ? ' …' : ''} (${time})`;
}

export async function runLargeRepoBench(context: BenchContext): Promise<SectionResult> {
  if (!fs.existsSync(CLI)) throw new Error('large: dist/cli.js is missing (npm run build)');
  const files = Number(process.env.AVH_BENCH_LARGE_FILES ?? (context.quick ? 5_000 : 250_000));
  const reps = Number(process.env.AVH_BENCH_LARGE_REPS ?? (context.quick ? 2 : 5));
  const { dir, changed } = await largeRepo(context, files);
  const hook = hookCommand('claude-code', { cliFile: CLI });
  const cli = (...args: string[]) => [...hookEnvWords(), process.execPath, CLI, ...args].map(shellWord).join(' ');
  let chat = 'large-chat';
  let seq = 0;
  const payload = (event: 'UserPromptSubmit' | 'Stop', session = chat) =>
    JSON.stringify({
      hook_event_name: event,
      session_id: session,
      cwd: dir,
      ...(event === 'UserPromptSubmit' ? { prompt: 'bench prompt' } : {}),
    });
  const run = (event: 'UserPromptSubmit' | 'Stop', session = chat) =>
    measure(hook, dir, payload(event, session), { COPILOT_CLI: '' });
  const edit = (tag: string) => {
    for (const rel of changed) fs.appendFileSync(path.join(dir, rel), `${tag}\n`);
  };
  const clean = () => {
    gitIn(dir, 'checkout', '-q', '--', '.');
    gitIn(dir, 'clean', '-fdq');
  };
  const hookRow = (event: 'UserPromptSubmit' | 'Stop', session?: () => string) => () => ({
    command: hook,
    input: payload(event, session?.()),
  });
  const rows: Row[] = [
    {
      id: 'prompt-clean',
      event: 'prompt on a clean tree (a known chat, no turn running)',
      // A turn first (untimed) after the last row's Undo: its prompt prints that note, and the facts are fresh again.
      before: () => {
        run('UserPromptSubmit');
        run('Stop');
      },
      command: hookRow('UserPromptSubmit'),
      after: () => void run('Stop'),
      goal: 1.15,
    },
    {
      id: 'prompt-interrupted',
      event: `prompt that ends an interrupted turn (its ${CHANGED} changed files still in the tree)`,
      before: () => {
        run('UserPromptSubmit');
        edit(`partial ${++seq}`);
      },
      command: hookRow('UserPromptSubmit'),
      after: () => {
        run('Stop');
        clean();
      },
      goal: 1.15,
    },
    {
      id: 'prompt-new-chat',
      event: "a new chat's first prompt (clean tree)",
      before: () => void (chat = `large-chat-${++seq}`),
      command: hookRow('UserPromptSubmit', () => chat),
      after: () => void run('Stop'),
      goal: 1.15,
    },
    {
      id: 'stop-version',
      event: `Stop that makes a version (${CHANGED} files changed)`,
      before: () => {
        run('UserPromptSubmit');
        edit(`version ${++seq}`);
      },
      command: hookRow('Stop'),
      after: () => undefined,
      goal: 1.3,
    },
    {
      id: 'undo',
      event: 'Undo of that turn (`undo --yes`)',
      before: () => undefined,
      command: () => ({ command: cli('undo', '--yes'), input: '' }),
      after: () => undefined,
      goal: 1.4,
    },
    {
      id: 'redo',
      event: 'Redo (`redo --yes`)',
      before: () => undefined,
      command: () => ({ command: cli('redo', '--yes'), input: '' }),
      after: () => undefined,
      goal: 1.4,
    },
    {
      id: 'undo-only',
      event: 'Undo Only This Turn of a new turn (`undo --only turn --yes`)',
      before: () => {
        run('UserPromptSubmit');
        edit(`only ${++seq}`);
        run('Stop');
      },
      command: () => ({ command: cli('undo', '--only', 'turn', '--yes'), input: '' }),
      after: () => undefined,
      goal: 1.4,
    },
  ];
  const statusCommand = 'git status --porcelain';
  const shim = gitShim(context.workDir);
  const variants: { name: string; measured: Measured[] }[] = [];
  for (const untrackedCache of [false, true]) {
    const name = untrackedCache ? 'core.untrackedCache=true' : 'default configuration';
    if (untrackedCache) {
      gitIn(dir, 'config', 'core.untrackedCache', 'true');
      gitIn(dir, 'status', '--porcelain'); // writes the cache into the index (the user's own status does)
    } else {
      // Without the setting git keeps a cache an index already holds ("keep"), and `reset --hard` carries it over
      // from the last run's cached variant: removed, so this variant has none.
      gitIn(dir, 'update-index', '--no-untracked-cache');
    }
    const measured: Measured[] = rows.map((row) => ({ row, event: [], status: [], calls: [] }));
    // Warm-up: the chat known to the facts file, the page cache filled.
    run('UserPromptSubmit');
    run('Stop');
    measure(statusCommand, dir);
    context.progress(`large: ${name}: ${reps} repetitions of ${rows.length} events beside a status…`);
    for (let r = 0; r <= reps; r++) {
      for (const m of measured) {
        m.row.before();
        const { command, input } = m.row.command();
        const statusFirst = (r + seq) % 2 === 0;
        const status = statusFirst ? measure(statusCommand, dir) : null;
        const event = measure(command, dir, input, { COPILOT_CLI: '' });
        const after = status ?? measure(statusCommand, dir);
        m.row.after();
        if (r === 0) continue; // discarded warm-up repetition
        m.event.push(event);
        m.status.push(after);
      }
    }
    // One more of each, untimed, through the shim: the event's git processes and their wall time.
    for (const m of measured) {
      m.row.before();
      const { command, input } = m.row.command();
      fs.writeFileSync(shim.log, '');
      measure(command, dir, input, { COPILOT_CLI: '', PATH: shim.pathEnv });
      m.calls = fs.readFileSync(shim.log, 'utf8').trim().split('\n').filter(Boolean).map(callLine);
      m.row.after();
    }
    variants.push({ name, measured });
  }
  spawnSync('git', ['config', '--unset-all', 'core.untrackedCache'], { cwd: dir });

  const ratio = (m: Measured) => median(m.event.map((e) => e.ms)) / median(m.status.map((s) => s.ms));
  const mb = (kb: number) => `${(kb / 1024).toFixed(0)} MB`;
  const label = files.toLocaleString('en');
  const goals: GoalRow[] = variants.flatMap((v) =>
    v.measured.map((m) => ({
      id: '36.1',
      measure: `${label} files, ${v.name}: ${m.row.event} vs one \`git status --porcelain\``,
      goal: `≤ ${m.row.goal}×`,
      measured:
        `${fmtRatio(ratio(m))} (${ms(median(m.event.map((e) => e.ms)))} vs ` +
        `${ms(median(m.status.map((s) => s.ms)))})`,
      pass: ratio(m) <= m.row.goal,
    })),
  );
  const table = (v: { name: string; measured: Measured[] }) => [
    `### ${v.name}`,
    '',
    '| event | event p50 | status p50 | ratio | goal | event RSS (max) | status RSS (max) | git processes (wall time each) |',
    '|---|---:|---:|---:|---:|---:|---:|---|',
    ...v.measured.map(
      (m) =>
        `| ${m.row.event} | ${ms(median(m.event.map((e) => e.ms)))} | ${ms(median(m.status.map((s) => s.ms)))} | ` +
        `${fmtRatio(ratio(m))} | ≤ ${m.row.goal}× | ${mb(Math.max(...m.event.map((e) => e.rssKb)))} | ` +
        `${mb(Math.max(...m.status.map((s) => s.rssKb)))} | ${m.calls.length}: ${m.calls.join('; ')} |`,
    ),
    '',
  ];
  const markdown = [
    '## Large repository (issue 36)',
    '',
    `${label} files of 256 bytes in folders of 20, one commit; ${CHANGED} files changed per turn. Each event as a ` +
      'user meets it: the shipped `dist/cli.js` in a new process through `/bin/sh -c` (hook events: the command ' +
      "`connect claude-code` writes, Claude Code's payload on stdin; Undo, Redo, Undo Only This Turn: " +
      '`agent-versions undo|redo …`), under `/usr/bin/time -f %M` for its peak RSS (the largest process: Node or ' +
      'one git). Beside each, alternating which goes first, one `git status --porcelain` on the same tree, started ' +
      `the same way. ${reps} repetitions after one discarded. The git processes are one more untimed run of each ` +
      'event through a PATH shim (wall time per process; our pinned `-c` pairs left out).',
    '',
    ...variants.flatMap(table),
  ].join('\n');
  return { markdown, goals };
}
