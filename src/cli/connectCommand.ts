import * as os from 'node:os';
import { isAvhError } from '../core/errors';
import { resolveRepository } from '../core/git/repository';
import {
  ADAPTERS,
  AgentAdapter,
  ourHookEntries,
  planConnect,
  planDisconnect,
  readSettings,
  SCOPES,
  SettingsChange,
  SettingsFileError,
  SettingsScope,
  writeSettings,
} from './agentSettings';
import type { AgentName } from './commandLine';
import { EXIT, UsageError } from './exitCodes';
import { hookCommand } from './installation';

export interface ConnectRequest {
  action: 'connect' | 'disconnect';
  agent: AgentName;
  scope: SettingsScope;
  dryRun: boolean;
  /** connect: the hook command creates the repository in a folder without git (`hook … --init`). */
  init?: boolean;
  /** The folder given by --repo or the current one; project scopes use its repository's top level. */
  folder: string;
}

const SCOPE_LABELS: Record<SettingsScope, string> = {
  project: 'project settings',
  local: 'local project settings',
  user: 'user settings',
};

/** The settings files of every scope, for the folder (project scopes only inside a repository). */
export async function settingsFiles(
  adapter: AgentAdapter,
  folder: string,
): Promise<{ scope: SettingsScope; file: string }[]> {
  const root = await projectRoot(folder).catch(() => null);
  return SCOPES.filter((scope) => adapter.scopes.includes(scope)).flatMap((scope) =>
    scope !== 'user' && root === null ? [] : [{ scope, file: adapter.settingsFile(scope, root ?? '', os.homedir()) }],
  );
}

async function projectRoot(folder: string): Promise<string> {
  try {
    return (await resolveRepository(folder)).root;
  } catch (error) {
    if (isAvhError(error)) {
      throw new SettingsFileError(
        `Project settings belong to a git repository, and ${folder} is not in one. Run the command inside the project (or pass --repo <path>), or use --user.`,
        EXIT.failed,
      );
    }
    throw error;
  }
}

/** `connect` / `disconnect`: plans the edit, writes it unless --dry-run, and says what changed. */
export async function runConnect(request: ConnectRequest): Promise<{ json: unknown; text: string }> {
  const adapter = ADAPTERS[request.agent];
  if (!adapter.scopes.includes(request.scope)) {
    throw new UsageError(
      `${adapter.displayName} has no ${SCOPE_LABELS[request.scope]} file; use ${adapter.scopes.map((s) => `--${s}`).join(' or ')}`,
      request.action,
    );
  }
  const file = adapter.settingsFile(
    request.scope,
    request.scope === 'user' ? '' : await projectRoot(request.folder),
    os.homedir(),
  );
  const command = hookCommand(request.agent, { init: request.init === true });
  const before = readSettings(file);
  const edit =
    request.action === 'connect' ? planConnect(file, before, adapter, command) : planDisconnect(file, before, adapter);
  if (edit.after !== null && !request.dryRun) writeSettings(file, edit.after);
  const others = (await settingsFiles(adapter, request.folder)).filter(
    (f) => f.file !== file && connectedIn(adapter, f.file),
  );
  const json = {
    agent: request.agent,
    scope: request.scope,
    file,
    command,
    dryRun: request.dryRun,
    changed: edit.after !== null && !request.dryRun,
    changes: edit.changes,
    alsoConnectedIn: others.map((o) => o.file),
  };
  return { json, text: describe(request, adapter, file, command, edit.changes, others) };
}

/** Whether a settings file holds any hook entry of ours; an unreadable or malformed file counts as not. */
function connectedIn(adapter: AgentAdapter, file: string): boolean {
  try {
    return ourHookEntries(file, readSettings(file), adapter).size > 0;
  } catch {
    return false;
  }
}

function describe(
  request: ConnectRequest,
  adapter: AgentAdapter,
  file: string,
  command: string,
  changes: readonly SettingsChange[],
  others: readonly { scope: SettingsScope; file: string }[],
): string {
  const where = `${file} (${SCOPE_LABELS[request.scope]})`;
  const lines: string[] = [];
  if (changes.length === 0) {
    lines.push(
      request.action === 'connect'
        ? `${adapter.displayName} is already connected in ${where}; nothing changed.`
        : `${adapter.displayName} is not connected in ${where}; nothing changed.`,
    );
  } else {
    const verb = request.action === 'connect' ? 'Connected' : 'Disconnected';
    lines.push(`${request.dryRun ? `Would ${request.action}` : verb} ${adapter.displayName} in ${where}:`);
    const width = Math.max(...changes.map((c) => c.action.length));
    lines.push(...changes.map((c) => `  ${c.action.padEnd(width)}  ${c.event} hook`));
    if (request.action === 'connect') lines.push(`Hook command: ${command}`);
    if (request.action === 'connect' && request.scope === 'project') {
      lines.push(
        `This file is usually committed with the project, and the command names paths on this machine; ${adapter.scopes.includes('local') ? 'use --local to keep it to yourself' : 'use --user to keep it to yourself'}.`,
      );
    }
    if (request.dryRun) lines.push('Dry run: nothing was written.');
  }
  for (const other of others) {
    lines.push(
      request.action === 'connect'
        ? `Note: ${other.file} also runs agent-versions for ${adapter.displayName}, so every hook would run twice. Remove it with: agent-versions disconnect ${request.agent} --${other.scope}`
        : `Still connected in ${other.file}; remove it with: agent-versions disconnect ${request.agent} --${other.scope}`,
    );
  }
  return lines.join('\n');
}
