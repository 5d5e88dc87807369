import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { contextOf } from '../../../src/core/repoContextOf';
import { VersionHistory } from '../../../src/core/versionHistory';
import { contentInventory, git, tempDir, testGitEnv, write } from '../../support/gitFixtures';

/**
 * One real-agent scenario's world: a temp HOME (the agents' config lives there), a real repository with a commit,
 * a user's uncommitted edit and an untracked file (what a user has when they start a session), the folder the
 * capture hook writes to, and the log the hook timer appends to. Our CLI runs as the shipped bundle (dist/cli.js).
 */

const PROJECT_ROOT = path.resolve(__dirname, '../../../..');
export const DIST_CLI = path.join(PROJECT_ROOT, 'dist', 'cli.js');
const SUPPORT_SOURCES = path.join(PROJECT_ROOT, 'test', 'agents', 'support');
export const CAPTURE_HOOK = path.join(SUPPORT_SOURCES, 'captureHook.sh');
export const HOOK_TIMER = path.join(SUPPORT_SOURCES, 'hookTimer.sh');

export const USER_EDIT = '# demo\nthe user is editing this, not committed\n';
export const UNTRACKED = 'notes the user has not added to git\n';

export interface Sandbox {
  root: string;
  home: string;
  repo: string;
  captureDir: string;
  timingLog: string;
}

/** The repository as the user has it when the session starts: committed files, then an edit and an untracked file. */
export function makeSandbox(name: string): Sandbox {
  const root = tempDir(`avh-agent-${name}-`);
  const home = path.join(root, 'home');
  const repo = path.join(root, 'repo');
  const captureDir = path.join(root, 'capture');
  for (const dir of [home, repo, captureDir]) fs.mkdirSync(dir, { recursive: true });
  git(repo, 'init', '-q', '-b', 'main');
  git(repo, 'config', 'user.name', 'Test User');
  git(repo, 'config', 'user.email', 'test@example.com');
  git(repo, 'config', 'commit.gpgsign', 'false');
  write(repo, 'README.md', '# demo\n');
  write(repo, 'src.txt', 'one\n');
  write(repo, '.gitignore', 'ignored/\n');
  git(repo, 'add', '-A');
  git(repo, 'commit', '-q', '-m', 'initial');
  return { root, home, repo, captureDir, timingLog: path.join(root, 'hook-timings.jsonl') };
}

/** The user's own work in progress, made after the project's settings were committed. */
export function addUserWork(sandbox: Sandbox): void {
  write(sandbox.repo, 'README.md', USER_EDIT);
  write(sandbox.repo, 'notes.txt', UNTRACKED);
}

/** Commits what `connect` wrote (a project usually commits its agent settings), so trees compare the user's work only. */
export function commitSettings(sandbox: Sandbox, ...files: string[]): void {
  git(sandbox.repo, 'add', '--', ...files);
  git(sandbox.repo, 'commit', '-q', '-m', 'connect agent-versions');
}

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
  ms: number;
}

/**
 * The agents' own variables for their user folders, blanked: whatever agent runs these tests, its folders are never
 * read or written (each test gives its agent a HOME, and its own folder variables where it needs them).
 */
export const NO_AGENT_HOMES: NodeJS.ProcessEnv = {
  CLAUDE_CONFIG_DIR: '',
  CODEX_HOME: '',
  COPILOT_HOME: '',
  GEMINI_CLI_HOME: '',
  XDG_CONFIG_HOME: '',
  COPILOT_CLI: '',
  CLAUDECODE: '',
};

/**
 * A clean environment for an agent: this machine's PATH and locale, the sandbox's HOME, git without the system
 * config, and nothing of the process that runs the tests (another agent's variables, tokens).
 */
export function agentEnv(sandbox: Sandbox, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    LANG: 'C.UTF-8',
    HOME: sandbox.home,
    TMPDIR: sandbox.root,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_TERMINAL_PROMPT: '0',
    ...extra,
  };
}

/** `agent-versions <args>` (the shipped bundle) in the repository, with the sandbox's HOME. */
export function avh(sandbox: Sandbox, args: string[], env: NodeJS.ProcessEnv = {}): CliRun {
  const t0 = Date.now();
  const r = spawnSync(process.execPath, [DIST_CLI, ...args], {
    cwd: sandbox.repo,
    encoding: 'utf8',
    env: { ...testGitEnv(), ...NO_AGENT_HOMES, HOME: sandbox.home, ...env },
    timeout: 60_000,
  });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr, ms: Date.now() - t0 };
}

export function avhJson<T>(sandbox: Sandbox, args: string[], env: NodeJS.ProcessEnv = {}): T {
  const r = avh(sandbox, [...args, '--json'], env);
  assert.equal(r.code, 0, `agent-versions ${args.join(' ')} exited ${r.code}: ${r.stderr}${r.stdout}`);
  return JSON.parse(r.stdout) as T;
}

/** Every file of the working tree but .git (ignored files included), path → content: the "exact tree". */
export function treeOf(repo: string): Record<string, string> {
  const tree: Record<string, string> = {};
  const walk = (dir: string) => {
    for (const name of fs.readdirSync(dir).sort()) {
      const full = path.join(dir, name);
      const rel = path.relative(repo, full);
      if (rel === '.git') continue;
      const st = fs.lstatSync(full);
      if (st.isDirectory()) walk(full);
      else tree[rel] = st.isSymbolicLink() ? `-> ${fs.readlinkSync(full)}` : fs.readFileSync(full, 'utf8');
    }
  };
  walk(repo);
  return tree;
}

/**
 * Removes a sandbox. An agent killed with its terminal still runs its SessionEnd hooks for a moment, so the capture
 * folder may fill again while it is being removed: retry for a few seconds.
 */
export async function removeSandbox(sandbox: Sandbox): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      fs.rmSync(sandbox.root, { recursive: true, force: true });
      return;
    } catch (error) {
      if (attempt >= 20) throw error;
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}

/** Content the user could lose, as gitFixtures.assertNothingLost compares it. */
export const inventory = contentInventory;

export interface TurnRecord {
  id: string;
  chatId: string;
  seq: number;
  agent: string | null;
  recovery: string;
  outcome: string | null;
  version: string | null;
  noVersionReason: string | null;
  undoneBy: string | null;
  createdAt: number;
  endedAt: number | null;
}

/** Every turn the store holds, oldest first (read through the real store, as the CLI opens it). */
export async function turnsOf(repo: string): Promise<TurnRecord[]> {
  const history = await VersionHistory.open(repo);
  try {
    const rows = await contextOf(history).store.read((r) =>
      r.all<{
        id: string;
        chat_id: string;
        seq: number;
        agent: string | null;
        recovery: string;
        terminal_outcome: string | null;
        version_commit: string | null;
        no_version_reason: string | null;
        undone_by: string | null;
        created_at: number;
        ended_at: number | null;
      }>('SELECT * FROM turns ORDER BY created_at, rowid'),
    );
    return rows.map((t) => ({
      id: t.id,
      chatId: t.chat_id,
      seq: t.seq,
      agent: t.agent,
      recovery: t.recovery,
      outcome: t.terminal_outcome,
      version: t.version_commit,
      noVersionReason: t.no_version_reason,
      undoneBy: t.undone_by,
      createdAt: t.created_at,
      endedAt: t.ended_at,
    }));
  } finally {
    await history.close();
  }
}

export interface CapturedEvent {
  event: string;
  /** When the capture hook started, epoch nanoseconds (one clock for every hook of the run). */
  startedNs: bigint;
  payload: Record<string, unknown>;
  argv: string[];
  /** The hook's environment, secrets (KEY, TOKEN, SECRET) redacted. */
  env: Record<string, string>;
}

/** What the capture hook recorded, in the order the hooks started. */
export function capturedEvents(sandbox: Sandbox): CapturedEvent[] {
  const files = fs.readdirSync(sandbox.captureDir).filter((f) => f.endsWith('.stdin'));
  const events = files.map((f) => {
    const base = path.join(sandbox.captureDir, f.slice(0, -'.stdin'.length));
    const payload = JSON.parse(fs.readFileSync(`${base}.stdin`, 'utf8')) as Record<string, unknown>;
    const env: Record<string, string> = {};
    for (const line of readIfThere(`${base}.env`).split('\n')) {
      const at = line.indexOf('=');
      if (at <= 0) continue;
      const key = line.slice(0, at);
      env[key] = /KEY|TOKEN|SECRET/i.test(key) ? '<redacted>' : line.slice(at + 1);
    }
    return {
      event: String(payload.hook_event_name ?? payload.hookEventName ?? 'unknown'),
      startedNs: BigInt(f.split('-')[0]),
      payload,
      argv: readIfThere(`${base}.argv`).split('\n').filter(Boolean),
      env,
    };
  });
  return events.sort((a, b) => (a.startedNs < b.startedNs ? -1 : a.startedNs > b.startedNs ? 1 : 0));
}

/** Forgets what was captured so far (between the phases of one test). */
export function clearCapture(sandbox: Sandbox): void {
  for (const f of fs.readdirSync(sandbox.captureDir)) fs.rmSync(path.join(sandbox.captureDir, f), { force: true });
}

export interface HookTiming {
  event: string;
  startUs: number;
  endUs: number;
  code: number;
  /** 0: the agent sent no event (it exited while starting the hook). */
  stdinBytes: number;
  stdoutBytes: number;
  ms: number;
}

/** Our hook's runs, as the timer wrapper logged them (empty when the hooks are not timed). */
export function hookTimings(sandbox: Sandbox): HookTiming[] {
  return readIfThere(sandbox.timingLog)
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const t = JSON.parse(line) as Omit<HookTiming, 'ms'>;
      return { ...t, ms: (t.endUs - t.startUs) / 1000 };
    });
}

/**
 * Rewrites every command of ours in a hooks file to run through the timer (hookTimer.sh), which runs the very same
 * command with the same stdin and logs how long it took. The file stays a valid hooks file of the agent.
 */
export function timeOurHooks(sandbox: Sandbox, hooksFile: string): void {
  const settings = JSON.parse(fs.readFileSync(hooksFile, 'utf8')) as {
    hooks: Record<string, { hooks: { command: string }[] }[]>;
  };
  for (const groups of Object.values(settings.hooks)) {
    for (const group of groups) {
      for (const hook of group.hooks) {
        if (hook.command.includes(DIST_CLI)) hook.command = `${HOOK_TIMER} ${sandbox.timingLog} '${hook.command}'`;
      }
    }
  }
  fs.writeFileSync(hooksFile, `${JSON.stringify(settings, null, 2)}\n`);
}

/** Adds the capture hook to every event of a hooks file (`{ "hooks": { Event: [ … ] } }`, Claude Code's and Codex's layout). */
export function addCaptureHooks(hooksFile: string, events: readonly string[]): void {
  const settings = fs.existsSync(hooksFile)
    ? (JSON.parse(fs.readFileSync(hooksFile, 'utf8')) as Record<string, unknown>)
    : {};
  const hooks = (settings.hooks ?? {}) as Record<string, unknown[]>;
  for (const event of events) {
    hooks[event] = [...(hooks[event] ?? []), { hooks: [{ type: 'command', command: CAPTURE_HOOK }] }];
  }
  settings.hooks = hooks;
  fs.mkdirSync(path.dirname(hooksFile), { recursive: true });
  fs.writeFileSync(hooksFile, `${JSON.stringify(settings, null, 2)}\n`);
}

/**
 * Replaces what is random in a run by placeholders, so samples compare across runs: the sandbox's temp root (also
 * as Claude Code's project slug, every non-alphanumeric as `-`) by `<sandbox>`, the mock's port by `<port>`.
 */
export function scrubbed(sandbox: Sandbox, value: unknown): unknown {
  const slug = sandbox.root.replace(/[^a-zA-Z0-9]/g, '-');
  const text = JSON.stringify(value).split(sandbox.root).join('<sandbox>').split(slug).join('-<sandbox>');
  return JSON.parse(text.replace(/127\.0\.0\.1:\d+/g, '127.0.0.1:<port>'));
}

function readIfThere(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

/** Environment keys worth keeping in a sample (what the agent tells its hooks), not the machine's own. */
const SAMPLE_ENV = /^(CLAUDE|CODEX|PWD$|HOME$|SHLVL$|OLDPWD$|PLUGIN|GIT_|ANTHROPIC_BASE_URL$|AVH_CAPTURE_DIR$)/;

/**
 * With AVH_AGENT_SAMPLES_DIR set, writes each captured event as `<dir>/<agent>/<scenario>.<nn>.<Event>.json`
 * (payload, argv, the agent's own environment keys), the sandbox's temp root replaced by `<sandbox>`.
 */
export function saveSamples(sandbox: Sandbox, agent: string, scenario: string, events: CapturedEvent[]): void {
  const dir = process.env.AVH_AGENT_SAMPLES_DIR;
  if (!dir) return;
  const target = path.join(dir, agent);
  fs.mkdirSync(target, { recursive: true });
  const t0 = events[0]?.startedNs ?? 0n;
  events.forEach((e, i) => {
    const env = Object.fromEntries(Object.entries(e.env).filter(([k]) => SAMPLE_ENV.test(k)));
    const sample = {
      agent,
      scenario,
      event: e.event,
      order: i + 1,
      msAfterFirstEvent: Number((e.startedNs - t0) / 1_000_000n),
      payload: e.payload,
      argv: e.argv.slice(1),
      env,
    };
    const name = `${scenario}.${String(i + 1).padStart(2, '0')}.${e.event}.json`;
    fs.writeFileSync(path.join(target, name), `${JSON.stringify(scrubbed(sandbox, sample), null, 2)}\n`);
  });
}

/**
 * Appends the scenario's hook timings to `<AVH_AGENT_REPORT_DIR or test-artifacts/agents>/hook-timings.jsonl`,
 * one line per hook run, for the timing table in the findings.
 */
export function saveTimings(sandbox: Sandbox, agent: string, scenario: string): HookTiming[] {
  const timings = hookTimings(sandbox);
  for (const t of timings) report('hook-timings', { agent, scenario, event: t.event, ms: t.ms, code: t.code });
  return timings;
}

/** Appends one JSON line to `<AVH_AGENT_REPORT_DIR or test-artifacts/agents>/<name>.jsonl` (measurements for the findings). */
export function report(name: string, line: Record<string, unknown>): void {
  const dir = process.env.AVH_AGENT_REPORT_DIR ?? path.join(PROJECT_ROOT, 'test-artifacts', 'agents');
  fs.mkdirSync(dir, { recursive: true });
  fs.appendFileSync(path.join(dir, `${name}.jsonl`), `${JSON.stringify({ at: Date.now(), ...line })}\n`);
}

/** With AVH_AGENT_SAMPLES_DIR set, writes one model request the agent sent (its whole body) as `<dir>/<agent>/model-request.<name>.json`. */
export function saveModelRequest(sandbox: Sandbox, agent: string, name: string, body: unknown): void {
  const dir = process.env.AVH_AGENT_SAMPLES_DIR;
  if (!dir) return;
  fs.mkdirSync(path.join(dir, agent), { recursive: true });
  fs.writeFileSync(
    path.join(dir, agent, `model-request.${name}.json`),
    `${JSON.stringify(scrubbed(sandbox, body), null, 2)}\n`,
  );
}
