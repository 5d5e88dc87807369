import * as fs from 'node:fs';
import * as path from 'node:path';
import { AgentBinary, claudeCodeBinary } from './agentBinaries';
import { AgentRun, startAgent } from './agentProcess';
import { addCaptureHooks, addUserWork, agentEnv, avh, commitSettings, Sandbox, timeOurHooks } from './agentSandbox';
import { AnthropicMock, AnthropicStep, startAnthropicMock } from './anthropicMock';
import { TmuxSession } from './tmuxSession';

/**
 * Claude Code 2.1.197 pointed at the Anthropic mock, offline: no telemetry, auto-update or other nonessential
 * traffic, no retries (CLAUDE_CODE_MAX_RETRIES=0, so an API error ends the turn at once), onboarding done and the
 * API key approved in `~/.claude.json` (interactive mode asks otherwise), permissions from user settings instead of
 * `--dangerously-skip-permissions` (refused as root outside a sandbox).
 */

/** Every hook event the 2.1.197 binary knows (its settings schema's list). */
export const CLAUDE_CODE_EVENTS = [
  'PreToolUse',
  'PostToolUse',
  'PostToolUseFailure',
  'PostToolBatch',
  'Notification',
  'UserPromptSubmit',
  'UserPromptExpansion',
  'SessionStart',
  'SessionEnd',
  'Stop',
  'StopFailure',
  'SubagentStart',
  'SubagentStop',
  'PreCompact',
  'PostCompact',
  'PermissionRequest',
  'PermissionDenied',
  'Setup',
  'TeammateIdle',
  'TaskCreated',
  'TaskCompleted',
  'Elicitation',
  'ElicitationResult',
  'ConfigChange',
  'WorktreeCreate',
  'WorktreeRemove',
  'InstructionsLoaded',
  'CwdChanged',
  'FileChanged',
  'MessageDisplay',
] as const;

const API_KEY = 'sk-ant-mock-key-0000000000000000000000';

export interface ClaudeCodeSetup {
  sandbox: Sandbox;
  bin: AgentBinary;
  mock: AnthropicMock;
  env: NodeJS.ProcessEnv;
  /** The settings file `connect` wrote (null when not connected). */
  settingsFile: string | null;
}

export interface ClaudeCodeOptions {
  /** Which settings file `agent-versions connect claude-code` writes; 'none' connects nothing. */
  connect?: 'project' | 'local' | 'user' | 'none';
  /** The capture hook on every event (user settings). */
  capture?: boolean;
  /** Our hook commands run through the timer (same command, same stdin; timings in sandbox.timingLog). */
  timeHooks?: boolean;
  script?: AnthropicStep[];
  /** Extra environment for the agent (and so for its hooks). */
  env?: NodeJS.ProcessEnv;
  /** More options for `connect` (`--guard-destructive`). */
  connectArgs?: string[];
}

export async function setUpClaudeCode(sandbox: Sandbox, options: ClaudeCodeOptions = {}): Promise<ClaudeCodeSetup> {
  const bin = claudeCodeBinary();
  const mock = await startAnthropicMock(options.script ?? [], { logFile: path.join(sandbox.root, 'requests.jsonl') });
  fs.writeFileSync(
    path.join(sandbox.home, '.claude.json'),
    JSON.stringify({
      hasCompletedOnboarding: true,
      lastOnboardingVersion: bin.version,
      theme: 'dark',
      // Claude Code remembers an approved ANTHROPIC_API_KEY by its last 20 characters.
      customApiKeyResponses: { approved: [API_KEY.slice(-20)], rejected: [] },
      projects: { [sandbox.repo]: { hasTrustDialogAccepted: true, hasCompletedProjectOnboarding: true } },
    }),
  );
  const userSettings = path.join(sandbox.home, '.claude', 'settings.json');
  fs.mkdirSync(path.dirname(userSettings), { recursive: true });
  fs.writeFileSync(
    userSettings,
    JSON.stringify({
      permissions: { allow: ['Bash', 'Read', 'Write', 'Edit', 'NotebookEdit'], defaultMode: 'acceptEdits' },
    }),
  );
  if (options.capture !== false) addCaptureHooks(userSettings, CLAUDE_CODE_EVENTS);

  let settingsFile: string | null = null;
  const scope = options.connect ?? 'project';
  if (scope !== 'none') {
    const r = avh(sandbox, ['connect', 'claude-code', `--${scope}`, '--json', ...(options.connectArgs ?? [])]);
    if (r.code !== 0) throw new Error(`connect claude-code --${scope} failed: ${r.stderr}`);
    settingsFile = (JSON.parse(r.stdout) as { file: string }).file;
    if (options.timeHooks) timeOurHooks(sandbox, settingsFile);
    if (scope === 'project') commitSettings(sandbox, path.relative(sandbox.repo, settingsFile));
  }
  addUserWork(sandbox);

  const env = agentEnv(sandbox, {
    ANTHROPIC_BASE_URL: mock.url,
    ANTHROPIC_API_KEY: API_KEY,
    DISABLE_TELEMETRY: '1',
    DISABLE_AUTOUPDATER: '1',
    DISABLE_ERROR_REPORTING: '1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    CLAUDE_CODE_MAX_RETRIES: '0',
    AVH_CAPTURE_DIR: sandbox.captureDir,
    ...options.env,
  });
  return { sandbox, bin, mock, env, settingsFile };
}

/** `claude -p <prompt> [args]` in the repository. */
export function claudePrint(setup: ClaudeCodeSetup, prompt: string, args: string[] = [], timeoutMs = 90_000): AgentRun {
  return startAgent(setup.bin.path, ['-p', prompt, ...args], {
    cwd: setup.sandbox.repo,
    env: setup.env,
    timeoutMs,
  });
}

/** Interactive Claude Code in tmux; resolves once the prompt box is on screen. */
export async function claudeInteractive(setup: ClaudeCodeSetup, args: string[] = []): Promise<TmuxSession> {
  const session = TmuxSession.start([setup.bin.path, ...args], { cwd: setup.sandbox.repo, env: setup.env });
  await session.waitForScreen(/accept edits on/, 'Claude Code to show its prompt', 60_000);
  return session;
}

/** Types a prompt and submits it. */
export function submitPrompt(session: TmuxSession, prompt: string): void {
  session.type(prompt);
  session.keys('Enter');
}
