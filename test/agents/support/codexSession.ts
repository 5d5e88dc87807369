import * as fs from 'node:fs';
import * as path from 'node:path';
import { AgentBinary, codexBinary } from './agentBinaries';
import { AgentRun, startAgent } from './agentProcess';
import { addCaptureHooks, addUserWork, agentEnv, avh, commitSettings, Sandbox, timeOurHooks } from './agentSandbox';
import { OpenAiResponsesMock, ResponsesStep, startOpenAiResponsesMock } from './openaiResponsesMock';
import { TmuxSession } from './tmuxSession';

/**
 * Codex 0.171 pointed at the Responses mock through a custom provider in `$CODEX_HOME/config.toml`
 * (`wire_api = "responses"`, `env_key`, no retries), the project trusted (`[projects."<repo>"] trust_level`,
 * what `codex exec --trust` writes), and a model from the binary's own catalog (gpt-6.2-sol: apply_patch as a
 * freeform tool, unified exec_command, no model-migration notice in the TUI).
 *
 * Hooks: Codex runs a hook only once the user has reviewed it (hooks.state."<file>:<event>:<group>:<handler>"
 * .trusted_hash in the user config.toml). The scenario tests pass `--dangerously-bypass-hook-trust` — Codex's own
 * switch for automation — and the trust tests drive the real review in the TUI.
 */

/** Codex 0.171's hook events, as its /hooks browser lists them (no StopFailure). */
export const CODEX_EVENTS = [
  'SessionStart',
  'UserPromptSubmit',
  'PreModelRequest',
  'PostModelRequest',
  'PreToolUse',
  'PermissionRequest',
  'PostToolUse',
  'PreCompact',
  'PostCompact',
  'SubagentStart',
  'SubagentStop',
  'Stop',
  'Interrupt',
  'SessionEnd',
] as const;

export const CODEX_MODEL = 'gpt-6.2-sol';
const API_KEY_ENV = 'AVH_MOCK_OPENAI_KEY';

export interface CodexSetup {
  sandbox: Sandbox;
  bin: AgentBinary;
  mock: OpenAiResponsesMock;
  codexHome: string;
  env: NodeJS.ProcessEnv;
  hooksFile: string | null;
}

export interface CodexOptions {
  connect?: 'project' | 'user' | 'none';
  /** The capture hook on every event, in `$CODEX_HOME/hooks.json` (the user layer). */
  capture?: boolean;
  timeHooks?: boolean;
  trustProject?: boolean;
  script?: ResponsesStep[];
  env?: NodeJS.ProcessEnv;
  /** More options for `connect` (`--guard-destructive`). */
  connectArgs?: string[];
}

export function writeCodexConfig(codexHome: string, options: { mockUrl: string; repo: string; trustProject: boolean }) {
  fs.mkdirSync(codexHome, { recursive: true });
  const lines = [
    `model = "${CODEX_MODEL}"`,
    'model_provider = "mock"',
    'approval_policy = "never"',
    'sandbox_mode = "danger-full-access"',
    'check_for_update_on_startup = false',
    // The TUI takes fast typing followed by Enter for a paste (Enter becomes a newline); tmux types fast.
    'disable_paste_burst = true',
    '',
    '[model_providers.mock]',
    'name = "mock"',
    `base_url = "${options.mockUrl}/v1"`,
    'wire_api = "responses"',
    `env_key = "${API_KEY_ENV}"`,
    'request_max_retries = 0',
    'stream_max_retries = 0',
    '',
    '[analytics]',
    'enabled = false',
    '',
    // The TUI otherwise starts a background app-server daemon (copied under $CODEX_HOME/packages) that outlives it.
    '[features]',
    'daemon_auto_start = false',
    '',
  ];
  if (options.trustProject) lines.push(`[projects."${options.repo}"]`, 'trust_level = "trusted"', '');
  fs.writeFileSync(path.join(codexHome, 'config.toml'), lines.join('\n'));
}

export async function setUpCodex(sandbox: Sandbox, options: CodexOptions = {}): Promise<CodexSetup> {
  const bin = codexBinary();
  const mock = await startOpenAiResponsesMock(options.script ?? [], {
    logFile: path.join(sandbox.root, 'requests.jsonl'),
  });
  const codexHome = path.join(sandbox.root, 'codex-home');
  writeCodexConfig(codexHome, { mockUrl: mock.url, repo: sandbox.repo, trustProject: options.trustProject !== false });
  if (options.capture !== false) addCaptureHooks(path.join(codexHome, 'hooks.json'), CODEX_EVENTS);
  const env = agentEnv(sandbox, {
    CODEX_HOME: codexHome,
    [API_KEY_ENV]: 'sk-mock-openai',
    AVH_CAPTURE_DIR: sandbox.captureDir,
    ...options.env,
  });

  let hooksFile: string | null = null;
  const scope = options.connect ?? 'project';
  if (scope !== 'none') {
    const r = avh(sandbox, ['connect', 'codex', `--${scope}`, '--json', ...(options.connectArgs ?? [])], {
      CODEX_HOME: codexHome,
    });
    if (r.code !== 0) throw new Error(`connect codex --${scope} failed: ${r.stderr}`);
    hooksFile = (JSON.parse(r.stdout) as { file: string }).file;
    if (options.timeHooks) timeOurHooks(sandbox, hooksFile);
    if (scope === 'project') commitSettings(sandbox, path.relative(sandbox.repo, hooksFile));
  }
  addUserWork(sandbox);
  return { sandbox, bin, mock, codexHome, env, hooksFile };
}

export interface ExecOptions {
  /** Codex's own switch: run enabled hooks without a stored review (default true in the scenario tests). */
  bypassHookTrust?: boolean;
  /** `codex exec resume <id|--last>`. */
  resume?: string;
  args?: string[];
  timeoutMs?: number;
}

/** `codex exec [resume …] <prompt>` in the repository. */
export function codexExec(setup: CodexSetup, prompt: string, options: ExecOptions = {}): AgentRun {
  const args = ['exec'];
  if (options.resume !== undefined) args.push('resume', ...(options.resume === 'last' ? ['--last'] : [options.resume]));
  if (options.bypassHookTrust !== false) args.push('--dangerously-bypass-hook-trust');
  args.push(...(options.args ?? []), prompt);
  return startAgent(setup.bin.path, args, { cwd: setup.sandbox.repo, env: setup.env, timeoutMs: options.timeoutMs });
}

/** Types a prompt into the TUI's composer and submits it. */
export async function submitCodexPrompt(session: TmuxSession, prompt: string): Promise<void> {
  session.type(prompt);
  await new Promise((r) => setTimeout(r, 300));
  session.keys('Enter');
}

/** Interactive Codex in tmux; resolves once the composer (or the startup hook review) is on screen. */
export async function codexInteractive(setup: CodexSetup, options: { bypassHookTrust?: boolean } = {}) {
  const args = options.bypassHookTrust === false ? [] : ['--dangerously-bypass-hook-trust'];
  const session = TmuxSession.start([setup.bin.path, ...args], { cwd: setup.sandbox.repo, env: setup.env });
  await session.waitForScreen(/Ask Codex to do anything|Hooks need review/, 'Codex to start', 60_000);
  return session;
}

/** The hook-state keys Codex uses: `<hooks file>:<event_snake>:<group index>:<handler index>`. */
export function codexHookKey(hooksFile: string, eventSnake: string, group = 0, handler = 0): string {
  return `${hooksFile}:${eventSnake}:${group}:${handler}`;
}
