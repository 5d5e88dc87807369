// A small demo agent: it records one turn through the real CLI hook commands, exactly like a terminal agent
// (`agent-versions turn begin`, edits, `agent-versions turn end`), editing files under greeter/ over a few
// seconds. A Stop (Ctrl+C, SIGTERM or --cancel-after) ends the turn as cancelled and leaves its partial changes
// in the working tree, so Undo Agent Turn can show the [Interrupted] preservation. Not part of the shipped CLI.
//
//   npm run demo-agent -- [--repo <path, default the npm start demo repository>] [--cancel-after <ms>]
//     [--step-ms <pause between edits, default 1500>] [--cli <agent-versions entry, default dist/cli.js, built first>]
/* global AbortController */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { repoRoot, vscodeTestDir } from './vscode/codeServer.mjs';

const DEMO_CHAT = 'demo-agent';
export const DEMO_FOLDER = 'greeter';
const defaultCli = path.join(repoRoot, 'dist/cli.js');
export const defaultDemoRepo = path.join(vscodeTestDir, 'demo-repo');

const GREETING_V1 = `// Greets someone by name.
export function greet(name) {
  return \`Hello, \${name}!\`;
}
`;
const GREETING_V2 = `import { GREETINGS } from './languages.js';

// Greets someone by name, in English unless another known language is asked for.
export function greet(name, language = 'en') {
  const greeting = GREETINGS[language] ?? GREETINGS.en;
  return \`\${greeting}, \${name}!\`;
}
`;
const LANGUAGES = `// Greeting words by language code.
export const GREETINGS = {
  en: 'Hello',
  fr: 'Bonjour',
  es: 'Hola',
};
`;
const TEST_V1 = `import assert from 'node:assert/strict';
import { greet } from './greeting.js';

assert.equal(greet('Ada'), 'Hello, Ada!');
`;
const MORE_LANGUAGES = [
  ['de', 'Hallo'],
  ['it', 'Ciao'],
  ['pt', 'Olá'],
  ['nl', 'Hallo'],
  ['sv', 'Hej'],
  ['fi', 'Hei'],
];

/**
 * The demo's tasks, one per turn. Each step is one edit an agent makes; the first task whose files are not there
 * yet is the next one, and the last one can run again and again (it always adds something).
 */
const TASKS = [
  {
    prompt: 'Add a greeter module with a test',
    due: (repo) => !existsSync(path.join(repo, DEMO_FOLDER, 'greeting.js')),
    steps: [
      { file: 'greeting.js', edit: () => GREETING_V1 },
      { file: 'greeting.test.js', edit: () => TEST_V1 },
      {
        file: 'README.md',
        edit: () => '# greeter\n\n`greet(name)` returns a greeting. Run the test with `node greeting.test.js`.\n',
      },
    ],
  },
  {
    prompt: 'Greet people in their own language',
    due: (repo) => !existsSync(path.join(repo, DEMO_FOLDER, 'languages.js')),
    steps: [
      { file: 'languages.js', edit: () => LANGUAGES },
      { file: 'greeting.js', edit: () => GREETING_V2 },
      {
        file: 'greeting.test.js',
        edit: (text) => `${text || TEST_V1}assert.equal(greet('Ada', 'fr'), 'Bonjour, Ada!');\n`,
      },
    ],
  },
  {
    prompt: 'Add one more language to the greeter',
    due: () => true,
    steps: [
      { file: 'languages.js', edit: (text) => text.replace(/\n};\n?$/, `\n  ${nextLanguage(text)},\n};\n`) },
      {
        file: 'greeting.test.js',
        edit: (text, repo) =>
          `${text || TEST_V1}assert.ok(greet('Ada', '${lastLanguage(repo)}').endsWith(', Ada!'));\n`,
      },
      {
        file: 'CHANGES.md',
        edit: (text, repo) => `${text || '# Changes\n'}- Added the "${lastLanguage(repo)}" greeting.\n`,
      },
    ],
  },
];

function nextLanguage(text) {
  const added = Math.max(0, (text.match(/^\s+'?[\w-]+'?: '/gm) ?? []).length - 3);
  const [code, word] = MORE_LANGUAGES[added % MORE_LANGUAGES.length];
  const round = Math.floor(added / MORE_LANGUAGES.length);
  return `'${code}${round ? `-${round + 1}` : ''}': '${word}'`;
}

function lastLanguage(repo) {
  const text = readFileSync(path.join(repo, DEMO_FOLDER, 'languages.js'), 'utf8');
  const codes = [...text.matchAll(/^\s+'?([\w-]+)'?: '/gm)].map((m) => m[1]);
  return codes[codes.length - 1];
}

/** The task the demo agent does next in `repo`. */
function nextTask(repo) {
  return TASKS.find((task) => task.due(repo));
}

/**
 * Runs `agent-versions --repo <repo> <args> --json` as its own process (its own process group, so a Ctrl+C meant for the
 * demo agent never kills the CLI halfway) and returns the parsed JSON. Its stderr is content-free by design.
 */
function runCliJson(cli, repo, args) {
  const what = `agent-versions ${args.slice(0, 2).join(' ')}`;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cli, '--repo', repo, ...args, '--json'], {
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.once('error', reject);
    child.once('close', (code, signal) => {
      if (code === 0) {
        try {
          resolve(JSON.parse(stdout));
        } catch {
          reject(new Error(`${what} printed no JSON`));
        }
        return;
      }
      const message = stderr
        .split('\n')
        .find((l) => l.startsWith('agent-versions: '))
        ?.slice('agent-versions: '.length);
      reject(new Error(`${what} failed (${signal ?? `exit ${code}`}): ${message ?? stderr.trim()}`));
    });
  });
}

function pause(ms, signal) {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

/**
 * One agent turn in `repo` through the real CLI: `turn begin`, the task's edits `stepMs` apart, `turn end`.
 * Stops early (outcome cancelled, partial changes left in the tree) when `signal` aborts or after
 * `stopAfterSteps` edits. An edit that fails ends the turn as errored and rethrows.
 * @param {{ repo: string, cli?: string, stepMs?: number, signal?: AbortSignal, stopAfterSteps?: number,
 *   say?: (line: string) => void, onBegin?: (turnId: string) => void }} options
 */
export async function runDemoTurn({
  repo,
  cli = defaultCli,
  stepMs = 1500,
  signal,
  stopAfterSteps,
  say = () => undefined,
  onBegin,
}) {
  const task = nextTask(repo);
  const { turnId } = await runCliJson(cli, repo, [
    'turn',
    'begin',
    '--chat',
    DEMO_CHAT,
    '--agent',
    'demo-agent',
    '--title',
    'Demo agent',
    '--prompt',
    task.prompt,
  ]);
  say(`turn ${turnId.slice(0, 8)} started: "${task.prompt}"`);
  onBegin?.(turnId);
  let stepsDone = 0;
  try {
    for (const step of task.steps) {
      if (signal?.aborted || stepsDone === stopAfterSteps) break;
      if (stepsDone > 0) await pause(stepMs, signal);
      if (signal?.aborted) break;
      const file = path.join(repo, DEMO_FOLDER, step.file);
      const before = existsSync(file) ? readFileSync(file, 'utf8') : '';
      mkdirSync(path.dirname(file), { recursive: true });
      writeFileSync(file, step.edit(before, repo));
      stepsDone += 1;
      say(`  ${before ? 'edited' : 'created'} ${DEMO_FOLDER}/${step.file} (${stepsDone}/${task.steps.length})`);
    }
  } catch (error) {
    await runCliJson(cli, repo, ['turn', 'end', turnId, '--outcome', 'errored']).catch(() => undefined);
    throw error;
  }
  const outcome = stepsDone === task.steps.length ? 'completed' : 'cancelled';
  const ended = await runCliJson(cli, repo, ['turn', 'end', turnId, '--outcome', outcome]);
  if (outcome === 'completed') {
    say(
      `turn ${turnId.slice(0, 8)} completed: ${ended.version ? `version ${ended.version.slice(0, 10)}` : 'no files changed, no version'}`,
    );
  } else {
    say(
      `turn ${turnId.slice(0, 8)} stopped after ${stepsDone} of ${task.steps.length} edits: it ended cancelled and its partial changes stay in the working tree.`,
    );
  }
  return {
    turnId,
    outcome: ended.outcome,
    version: ended.version ?? null,
    stepsDone,
    stepsTotal: task.steps.length,
    prompt: task.prompt,
  };
}

const USAGE = `Usage: npm run demo-agent -- [--repo <path>] [--cancel-after <ms>] [--step-ms <ms>] [--cli <path>]
  --repo          the git repository to edit (default: the demo repository of npm start, ${path.relative(repoRoot, defaultDemoRepo)})
  --cancel-after  Stop the turn this many milliseconds after it began (like pressing Stop in an agent)
  --step-ms       pause between two edits (default 1500)
  --cli           the agent-versions entry to run (default: dist/cli.js, built first)
Ctrl+C is a Stop too: the turn ends cancelled with its partial changes left in the working tree.`;

function fail(message, code = 2) {
  console.error(`[demo-agent] ${message}`);
  process.exit(code);
}

function wholeNumber(value, name) {
  if (value === undefined) return undefined;
  if (!/^\d{1,9}$/.test(value))
    fail(`${name} must be a whole number of milliseconds, got "${value.slice(0, 20)}"\n${USAGE}`);
  return Number(value);
}

async function main() {
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        repo: { type: 'string' },
        'cancel-after': { type: 'string' },
        'step-ms': { type: 'string' },
        cli: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (err) {
    fail(`${err.message}\n${USAGE}`);
  }
  if (values.help) {
    console.log(USAGE);
    return;
  }
  const cancelAfter = wholeNumber(values['cancel-after'], '--cancel-after');
  const stepMs = wholeNumber(values['step-ms'], '--step-ms') ?? 1500;
  const cli = path.resolve(values.cli ?? defaultCli);
  if (!values.cli) {
    // Build first (well under a second) so the demo always drives the CLI of the sources it sits beside.
    const built = spawnSync(process.execPath, [path.join(repoRoot, 'scripts/build.mjs')], {
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    if (built.status !== 0) fail(`'node scripts/build.mjs' failed (exit ${built.status ?? built.signal}).`, 1);
  }
  if (!existsSync(cli)) fail(`${cli} is missing: run 'npm run build' first.`, 1);
  const repo = path.resolve(values.repo ?? defaultDemoRepo);
  if (!existsSync(repo) || !statSync(repo).isDirectory()) {
    fail(
      values.repo
        ? `${repo} is not a folder.`
        : `There is no demo repository yet (${repo}): run 'npm start' first, or pass --repo <path>.`,
    );
  }

  const stop = new AbortController();
  let why = '';
  let stoppedAt = 0;
  const onSignal = (sig) => {
    if (stop.signal.aborted) {
      // npm forwards the terminal's Ctrl+C too: only a later, second press gets an answer.
      if (Date.now() - stoppedAt > 500) console.log('[demo-agent] still ending the turn, one moment…');
      return;
    }
    why = sig;
    stoppedAt = Date.now();
    console.log(`[demo-agent] ${sig}: stopping the turn…`);
    stop.abort();
  };
  for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, onSignal);
  let timer;
  const say = (line) => console.log(`[demo-agent] ${line}`);
  // The Stop timer starts once the turn has begun, so --cancel-after measures the agent's own work.
  const onBegin = () => {
    if (cancelAfter === undefined) return;
    timer = setTimeout(() => {
      why = `--cancel-after ${cancelAfter}`;
      say(`${why}: stopping the turn…`);
      stop.abort();
    }, cancelAfter);
  };
  const result = await runDemoTurn({ repo, cli, stepMs, signal: stop.signal, say, onBegin });
  clearTimeout(timer);
  if (result.outcome === 'cancelled') {
    say(
      `Stopped (${why || 'stop'}). In VS Code, "Agent Versions: Undo Agent Turn" saves these partial changes as an [Interrupted] version, then restores the state before the turn.`,
    );
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  main().catch((err) => fail(err.message, 1));
}
