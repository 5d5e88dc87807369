import * as os from 'node:os';
import { isAvhError } from '../core/errors';
import { resolveRepository } from '../core/git/repository';
import type { ConnectableAgent, SettingsScope } from './agents/agent';
import { connectableAgentNamed, scopesOf } from './agents/registry';
import {
  ourHookEntries,
  planConnect,
  planDisconnect,
  applySettingsEdit,
  readSettings,
  SettingsEdit,
  SettingsFileError,
  settingsFileOf,
} from './agentSettings';
import type { CommandContext } from './command';
import { EXIT, UsageError } from './exitCodes';
import { type HookCommands, hookCommands } from './installation';

export interface ConnectRequest {
  action: 'connect' | 'disconnect';
  agent: string;
  scope: SettingsScope;
  dryRun: boolean;
  /** connect: the hook command creates the repository in a folder without git (`hook … --init`). */
  init?: boolean;
  /**
   * connect: the pre-tool hook also answers the agent's own deny form for a destructive shell command
   * (`hook … --tool --guard-destructive`; issue 34). The checkpoint is taken all the same.
   */
  guardDestructive?: boolean;
  /** The folder given by --repo or the current one; project scopes use its repository's top level. */
  folder: string;
}

/** The request of `connect` or `disconnect`, from its argument and options (validated by the command line). */
export function connectRequest(action: ConnectRequest['action'], c: CommandContext): ConnectRequest {
  const { values } = c;
  return {
    action,
    agent: c.args[0],
    dryRun: values['dry-run'] === true,
    init: values.init === true,
    guardDestructive: values['guard-destructive'] === true,
    folder: c.folder,
    scope: values.user ? 'user' : values.local ? 'local' : 'project',
  };
}

const SCOPE_LABELS: Record<SettingsScope, string> = {
  project: 'project settings',
  local: 'local project settings',
  user: 'user settings',
};

/** The settings files of every scope, for the folder (project scopes only inside a repository). */
export async function settingsFiles(
  agent: ConnectableAgent,
  folder: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ scope: SettingsScope; file: string }[]> {
  const root = await projectRoot(folder).catch(() => null);
  return scopesOf(agent).flatMap((scope) =>
    scope !== 'user' && root === null
      ? []
      : [{ scope, file: settingsFileOf(agent, scope, root ?? '', os.homedir(), env) }],
  );
}

/** The project's top level for `folder`, or null outside a repository. */
export async function projectRootOf(folder: string): Promise<string | null> {
  return projectRoot(folder).catch(() => null);
}

async function projectRoot(folder: string): Promise<string> {
  try {
    return (await resolveRepository(folder)).root;
  } catch (error) {
    if (isAvhError(error)) {
      throw new SettingsFileError(
        `Project settings belong to a git repository, and ${folder} is not in one. ` +
          'Run the command inside the project (or pass --repo <path>), or use --user.',
        EXIT.failed,
      );
    }
    throw error;
  }
}

/** What `connect` / `disconnect` would write: the file, its bytes now, the edit, and the hook command. */
export interface ConnectionPlan {
  agent: ConnectableAgent;
  file: string;
  /** The lifecycle events' command (prompts, ends); the tool events' forms of it are in `commands`. */
  command: string;
  commands: HookCommands;
  /** The file's text now; null when it does not exist. */
  before: string | null;
  edit: SettingsEdit;
}

/**
 * Plans a connect or disconnect without writing anything (the CLI's --dry-run, and VS Code's preview). Throws a
 * SettingsFileError (a safe message) for a file we cannot edit: malformed, not an object, unreadable.
 */
export async function planConnection(request: ConnectRequest): Promise<ConnectionPlan> {
  const agent = connectableAgentNamed(request.agent);
  const scopes = scopesOf(agent);
  if (!scopes.includes(request.scope)) {
    throw new UsageError(
      `${agent.settings.displayName} has no ${SCOPE_LABELS[request.scope]} file; ` +
        `use ${scopes.map((s) => `--${s}`).join(' or ')}`,
      request.action,
    );
  }
  const file = settingsFileOf(
    agent,
    request.scope,
    request.scope === 'user' ? '' : await projectRoot(request.folder),
    os.homedir(),
    process.env,
  );
  const commands = hookCommands(request.agent, {
    init: request.init === true,
    guardDestructive: request.guardDestructive === true,
  });
  const before = readSettings(file);
  const edit =
    request.action === 'connect' ? planConnect(file, before, agent, commands) : planDisconnect(file, before, agent);
  return { agent, file, command: commands.lifecycle, commands, before, edit };
}

/** The other settings files of the agent that also run our hook (every hook would then run twice). */
export async function alsoConnectedIn(
  plan: ConnectionPlan,
  folder: string,
): Promise<{ scope: SettingsScope; file: string }[]> {
  return (await settingsFiles(plan.agent, folder)).filter(
    (f) => f.file !== plan.file && connectedIn(plan.agent, f.file),
  );
}

/** `connect` / `disconnect`: plans the edit, writes it unless --dry-run, and says what changed. */
export async function runConnect(request: ConnectRequest): Promise<{ json: unknown; text: string }> {
  const plan = await planConnection(request);
  const { agent, file, command, edit } = plan;
  const changed = edit.after !== null;
  if (!request.dryRun) applySettingsEdit(file, edit);
  const steps = request.action === 'connect' ? (agent.settings.userSteps?.(request.scope) ?? []) : [];
  const others = await alsoConnectedIn(plan, request.folder);
  const json = {
    agent: request.agent,
    scope: request.scope,
    file,
    command,
    toolCommand: plan.commands.tool,
    beforeToolCommand: plan.commands.beforeTool,
    guardDestructive: request.action === 'connect' && request.guardDestructive === true,
    dryRun: request.dryRun,
    changed: changed && !request.dryRun,
    removedFile: edit.remove === true,
    changes: edit.changes,
    alsoConnectedIn: others.map((o) => o.file),
    inAgent: steps,
  };
  return { json, text: describe(request, agent, file, command, edit, others, steps) };
}

/** Whether a settings file holds any hook entry of ours; an unreadable or malformed file counts as not. */
function connectedIn(agent: ConnectableAgent, file: string): boolean {
  try {
    return ourHookEntries(file, readSettings(file), agent).size > 0;
  } catch {
    return false;
  }
}

/** What connect --guard-destructive does for this agent: its own deny form, or that it has none. */
function guardLine(agent: ConnectableAgent): string {
  const name = agent.settings.displayName;
  return agent.guard
    ? `Before a destructive shell command (git reset --hard, rm -rf, …) ${name} is told not to run it and to ask ` +
        `you first (${agent.guard.help}); a checkpoint is taken all the same.`
    : `${name} gets no deny answer from the guard (none is proven with its binary yet): --guard-destructive only ` +
        'takes the checkpoint before a destructive command.';
}

function describe(
  request: ConnectRequest,
  agent: ConnectableAgent,
  file: string,
  command: string,
  edit: SettingsEdit,
  others: readonly { scope: SettingsScope; file: string }[],
  steps: readonly string[],
): string {
  const { changes } = edit;
  const where = `${file} (${SCOPE_LABELS[request.scope]})`;
  const name = agent.settings.displayName;
  const lines: string[] = [];
  if (changes.length === 0) {
    lines.push(
      request.action === 'connect'
        ? `${name} is already connected in ${where}; nothing changed.`
        : `${name} is not connected in ${where}; nothing changed.`,
    );
  } else {
    const verb = request.action === 'connect' ? 'Connected' : 'Disconnected';
    lines.push(`${request.dryRun ? `Would ${request.action}` : verb} ${name} in ${where}:`);
    const width = Math.max(...changes.map((c) => c.action.length));
    lines.push(...changes.map((c) => `  ${c.action.padEnd(width)}  ${c.event} hook`));
    if (request.action === 'connect') {
      lines.push(`Hook command: ${command}`, 'Tool events run it with --tool (no git runs before the event is read).');
      if (request.guardDestructive) lines.push(guardLine(agent));
    }
    if (edit.remove) lines.push(`${request.dryRun ? 'Would remove' : 'Removed'} the file: nothing else was in it.`);
    if (request.action === 'connect' && request.scope === 'project') {
      const yours = scopesOf(agent).includes('local') ? '--local' : '--user';
      lines.push(
        'This file is usually committed with the project, and the command names paths on this machine; ' +
          `use ${yours} to keep it to yourself.`,
      );
    }
    if (request.dryRun) lines.push('Dry run: nothing was written.');
  }
  if (steps.length > 0) lines.push(`Then, in ${name}:`, ...steps.map((step) => `  - ${step}`));
  for (const other of others) {
    lines.push(
      request.action === 'connect'
        ? `Note: ${other.file} also runs agent-versions for ${name}, so every hook would run twice. ` +
            `Remove it with: agent-versions disconnect ${request.agent} --${other.scope}`
        : `Still connected in ${other.file}; ` +
            `remove it with: agent-versions disconnect ${request.agent} --${other.scope}`,
    );
  }
  return lines.join('\n');
}
