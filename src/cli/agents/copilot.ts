import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  HookEvent,
  hookEventTable,
  JsonObject,
  lifecycleAction,
  objectField,
  optionalString,
  parseJsonObject,
  reportedPath,
  requiredString,
  shellCommandOf,
  snakeCaseFields,
} from '../hooks/hookEvent';
import { topLevelContext } from '../hooks/contextChannel';
import { copilotPreToolUseDeny } from '../hooks/guardAnswers';
import type { ConnectableAgent, ReviewContext, ReviewFinding } from './agent';
import type { ToolWrites } from '../../core/versionHistory';

/**
 * `agent-versions hook copilot`: GitHub Copilot — the Copilot CLI (verified against 1.0.102,
 * test/agents/copilotCli.agent.test.ts) and VS Code's own agent hooks (1.139, Copilot Chat 0.67: read from its
 * source, not run here: its models need a GitHub sign-in). Both read `.github/hooks/*.json` (project; Copilot CLI
 * only in a folder the user trusted in Copilot) and `~/.copilot/hooks/*.json` (user: Copilot CLI reads
 * `$COPILOT_HOME/hooks`, VS Code the literal `~/.copilot/hooks`), so `connect copilot` writes a file of our own,
 * `agent-versions.json`, that serves both.
 *
 * - PascalCase event names get the snake_case payload (`hook_event_name`, `session_id`, `cwd`, `prompt`) from both;
 *   camelCase names (`userPromptSubmitted`) would get camelCase fields with no event name at all, so connect writes
 *   PascalCase. VS Code before 1.139 sent `hookEventName`/`sessionId`: still read.
 * - Copilot CLI sets `COPILOT_CLI=1` in its hooks' environment, VS Code nothing: the turns are recorded as
 *   `copilot-cli` (chat `copilot-cli:<session_id>`) or `copilot` (chat `copilot:<session_id>`).
 * - UserPromptSubmit begins a turn; Stop ends it completed (VS Code also sends Stop after a failed request, which the
 *   payload cannot tell); SessionEnd (Copilot CLI only) ends a still-running turn errored for `reason: "error"` (an
 *   API error), else cancelled (SIGINT in prompt mode says "complete" with no Stop before it). Escape in the
 *   interactive modes sends nothing: the chat's next prompt ends the turn cancelled. ErrorOccurred is ignored: every
 *   retry sends one, each `recoverable: true`.
 * - Context channel: UserPromptSubmit stdout `{"additionalContext": …}` (top level) becomes a `<system_reminder>` in
 *   the user's message (Copilot CLI; a Claude-style `hookSpecificOutput` is ignored there; VS Code takes either).
 * - Paths a tool wrote: PostToolUse `tool_input.path` for `Write` (create) and `Edit` (Claude tool names in the
 *   PascalCase payload); Bash has only `tool_input.command`.
 * - Before a tool runs: PreToolUse, the shell tool's `tool_input.command` (Copilot CLI's `Bash`, VS Code's
 *   `run_in_terminal`; issue 34: a checkpoint before a destructive one). The guard (--guard-destructive) answers
 *   the top-level `{"permissionDecision": "deny", "permissionDecisionReason"}` (Copilot CLI 1.0.102: the model reads
 *   "Denied by preToolUse hook: <reason>"; a hook that exits non-zero denies too, fail-closed, with no reason).
 */

const WHAT = 'hook event';
const VS_CODE = 'copilot';
const COPILOT_CLI = 'copilot-cli';

const EVENTS = hookEventTable([
  ['UserPromptSubmit', 'begin'],
  ['Stop', 'completed'],
  ['SessionEnd', 'cancelled'],
  ['PostToolUse', 'wrote'],
  ['PreToolUse', 'before-tool'],
]);

export const copilot: ConnectableAgent = {
  name: 'copilot',
  hookHelp: 'copilot (GitHub Copilot CLI, recorded as copilot-cli, and VS Code’s agent hooks)',
  events: EVENTS,
  readEvent: async ({ readStdin, env }) => copilotEvent(parseJsonObject(await readStdin(), WHAT), env),
  toolWrites: copilotToolWrites,
  context: topLevelContext,
  guard: copilotPreToolUseDeny,
  settings: {
    displayName: 'GitHub Copilot',
    files: { project: '.github/hooks/agent-versions.json' },
    user: {
      dir: (home, env) => env.COPILOT_HOME || path.join(home, '.copilot'),
      file: 'hooks/agent-versions.json',
      help: '~/.copilot/hooks/agent-versions.json',
    },
    newFile: '{\n  "version": 1\n}',
    ownFile: true,
    userSteps: (scope) =>
      scope === 'user'
        ? []
        : [
            'Copilot CLI runs a project’s hooks only in a folder you trust: run `copilot` once in this project ' +
              'and choose to trust the folder. VS Code runs them in a trusted workspace.',
          ],
    review: copilotFolderTrust,
  },
};

/** Either payload shape; the event's name decides what it does. */
function copilotEvent(o: JsonObject, env: NodeJS.ProcessEnv): HookEvent {
  if (o.hook_event_name === undefined && typeof o.hookEventName === 'string') return vsCodeEvent(o, env);
  const { event, session, cwd, prompt } = snakeCaseFields(o, WHAT);
  const agent = env.COPILOT_CLI === '1' ? COPILOT_CLI : VS_CODE;
  const action = lifecycleAction(
    event,
    prompt,
    EVENTS,
    () => copilotToolWrites(o, cwd),
    () => (SHELL_TOOLS.has(o.tool_name as string) ? shellCommandOf(objectField(o, 'tool_input').command) : null),
  );
  const failed = event === 'SessionEnd' && optionalString(o, 'reason', WHAT) === 'error';
  return {
    agent,
    event,
    chatId: `${agent}:${session}`,
    cwd,
    action: failed ? { kind: 'end', outcome: 'errored' } : action,
  };
}

/** VS Code's payload before 1.139 (camelCase common fields); its chats are `copilot:<sessionId>`. */
export function vsCodeEvent(o: JsonObject, env: NodeJS.ProcessEnv): HookEvent {
  const event = requiredString(o, 'hookEventName', WHAT);
  const session = requiredString(o, 'sessionId', WHAT);
  const agent = env.COPILOT_CLI === '1' ? COPILOT_CLI : VS_CODE;
  return {
    agent,
    event,
    chatId: `${agent}:${session}`,
    cwd: optionalString(o, 'cwd', WHAT),
    action: lifecycleAction(event, optionalString(o, 'prompt', WHAT), EVENTS),
  };
}

/** VS Code's file tools (1.139, Copilot Chat 0.67 source): each names `tool_input.filePath`. */
const VS_CODE_FILE_TOOLS = new Set([
  'create_file',
  'replace_string_in_file',
  'insert_edit_into_file',
  'edit_notebook_file',
]);
const SHELL_TOOLS = new Set(['Bash', 'run_in_terminal']);

/**
 * Copilot CLI's Write and Edit name `tool_input.path` (Claude tool names); VS Code's file tools `filePath`
 * (multi_replace_string_in_file one per replacement); Bash and run_in_terminal name no file.
 */
function copilotToolWrites(o: JsonObject, cwd: string | undefined): ToolWrites | null {
  const input = objectField(o, 'tool_input');
  const tool = typeof o.tool_name === 'string' ? o.tool_name : '';
  if (tool === 'Write' || tool === 'Edit') return { paths: reportedPath(input.path, cwd), shell: false };
  if (VS_CODE_FILE_TOOLS.has(tool)) return { paths: reportedPath(input.filePath, cwd), shell: false };
  if (tool === 'multi_replace_string_in_file') {
    const replacements = Array.isArray(input.replacements) ? (input.replacements as unknown[]) : [];
    const paths = replacements.flatMap((r) =>
      typeof r === 'object' && r !== null ? reportedPath((r as JsonObject).filePath, cwd) : [],
    );
    return { paths, shell: false };
  }
  return SHELL_TOOLS.has(tool) ? { paths: [], shell: true } : null;
}

/**
 * Copilot CLI's folder trust, read-only from `$COPILOT_HOME/config.json` (`trustedFolders`, a file Copilot
 * rewrites itself: never written here). Only project hooks need it.
 */
async function copilotFolderTrust(context: ReviewContext): Promise<ReviewFinding | null> {
  if (context.scope === 'user' || context.projectRoot === null) return null;
  const home = context.env.COPILOT_HOME || path.join(context.home, '.copilot');
  const config = path.join(home, 'config.json');
  let trusted: unknown;
  try {
    trusted = (JSON.parse(fs.readFileSync(config, 'utf8')) as { trustedFolders?: unknown }).trustedFolders;
  } catch {
    trusted = undefined;
  }
  const folders = Array.isArray(trusted) ? trusted.filter((f): f is string => typeof f === 'string') : [];
  const root = context.projectRoot;
  const covers = folders.some((f) => root === f || root.startsWith(`${f.replace(/\/+$/, '')}/`));
  const facts = { copilotConfig: config, folderTrusted: covers };
  if (covers) return { status: 'ok', summary: 'the folder is trusted in Copilot CLI', facts };
  return {
    status: 'warning',
    summary:
      `Copilot CLI has not been told to trust ${root}, so it skips this project's hooks ` +
      '(VS Code runs them in a trusted workspace).',
    fix: 'Run `copilot` in the project once and choose to trust the folder.',
    facts,
  };
}
