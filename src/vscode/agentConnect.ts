import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { alsoConnectedIn, ConnectionPlan, planConnection } from '../cli/agentConnection';
import type { ConnectableAgent, SettingsScope } from '../cli/agents/agent';
import { CONNECTABLE_AGENTS, connectableAgentNamed, scopesOf } from '../cli/agents/registry';
import { readSettings, SettingsChange, writableTarget, writeSettings } from '../cli/agentSettings';
import { CliError } from '../cli/exitCodes';
import { findRepository } from '../core/git/initRepository';
import { safeMessage } from '../core/errors';
import type { EventLog } from '../core/log';
import { AgentConnections } from './agentStates';
import { stateText } from './connectionStates';
import { ConnectPreview, previewTitle } from './connectPreview';

/**
 * *Connect Agent…*: the agent (from the CLI's registry), the scope, a preview of exactly what will be written, a
 * modal confirmation, then the write — all through the CLI's own connect code (planConnection, writeSettings:
 * byte-preserving, idempotent, atomic), so VS Code and `agent-versions connect` write the same bytes.
 */

export const CONNECT_AGENT_COMMAND = 'agentVersions.connectAgent';

/** What the command takes: an agent's name (a walkthrough link's argument), or that and the folder (the pane). */
export type ConnectArgs = string | { agent?: string; folder?: string } | undefined;

const SCOPE_CHOICES: Record<SettingsScope, { label: string; detail: string }> = {
  project: {
    label: 'This project',
    detail: 'Shared: the file is usually committed, so everyone who clones the project gets the hook.',
  },
  local: {
    label: 'Only me, in this project',
    detail: 'Your own settings for this project, not meant to be committed.',
  },
  user: { label: 'Every project (only me)', detail: 'Your user settings: every project you open.' },
};

/** `~/…` for a path in the home folder, `<folder>/…` shortened to the folder's relative path otherwise. */
export function displayPath(file: string, folder?: string | null): string {
  if (folder && file.startsWith(folder + path.sep)) return path.relative(folder, file);
  const home = os.homedir();
  return file.startsWith(home + path.sep) ? `~${file.slice(home.length)}` : file;
}

export class AgentConnector implements vscode.Disposable {
  private readonly preview = new ConnectPreview();

  constructor(
    private readonly connections: AgentConnections,
    private readonly log: EventLog,
  ) {}

  /** Runs the whole flow; resolves whether something was written. Every failure is a notification, never a throw. */
  async connect(args: ConnectArgs, defaultFolder: string | null): Promise<boolean> {
    const given = typeof args === 'string' ? { agent: args } : (args ?? {});
    const folder = given.folder ?? defaultFolder;
    try {
      const agent = await this.pickAgent(given.agent, folder);
      if (!agent) return false;
      const root = folder === null ? null : ((await findRepository(folder).catch(() => null))?.root ?? null);
      const scope = await this.pickScope(agent, root, folder);
      if (!scope) return false;
      const plan = await planConnection({
        action: 'connect',
        agent: agent.name,
        scope,
        dryRun: true,
        folder: root ?? folder ?? os.homedir(),
        // The setting agentVersions.guardDestructiveCommands: connect --guard-destructive (issue 34).
        guardDestructive: vscode.workspace
          .getConfiguration('agentVersions')
          .get<boolean>('guardDestructiveCommands', false),
      });
      return await this.confirmAndWrite(plan, scope, root ?? folder ?? os.homedir());
    } catch (error) {
      // The CLI's messages for a file it cannot edit (malformed, read-only, unreadable) are written to be shown.
      this.log.warn('connect.refused', { reason: error instanceof CliError ? 'settings-file' : 'unexpected' });
      void vscode.window.showErrorMessage(error instanceof CliError ? error.message : safeMessage(error));
      return false;
    } finally {
      await this.preview.close();
    }
  }

  private async pickAgent(name: string | undefined, folder: string | null): Promise<ConnectableAgent | undefined> {
    if (name !== undefined && CONNECTABLE_AGENTS.some((a) => a.name === name)) return connectableAgentNamed(name);
    const states = await this.connections.states(folder);
    const picked = await vscode.window.showQuickPick(
      states.map((s) => ({
        label: s.agent.settings.displayName,
        description: stateText(s.state, s.agent),
        agent: s.agent,
      })),
      { title: 'Connect an Agent', placeHolder: 'Which agent should record its turns as versions?' },
    );
    return picked?.agent;
  }

  private async pickScope(
    agent: ConnectableAgent,
    root: string | null,
    folder: string | null,
  ): Promise<SettingsScope | undefined> {
    // Project files belong to a repository (the CLI refuses them elsewhere): outside one, only the user's file.
    const scopes = scopesOf(agent).filter((s) => s === 'user' || root !== null);
    const items = scopes.map((scope) => {
      const description = scope === 'user' ? agent.settings.user!.help : agent.settings.files[scope]!;
      return {
        label: SCOPE_CHOICES[scope].label,
        description,
        detail: SCOPE_CHOICES[scope].detail,
        scope,
      };
    });
    const picked = await vscode.window.showQuickPick(items, {
      title: `Connect ${agent.settings.displayName}: where?`,
      placeHolder:
        root === null && folder !== null
          ? 'This folder is not a git repository: only your user settings can be chosen here'
          : 'Which settings file should run the hook?',
    });
    return picked?.scope;
  }

  private async confirmAndWrite(plan: ConnectionPlan, scope: SettingsScope, folder: string): Promise<boolean> {
    const name = plan.agent.settings.displayName;
    const shown = displayPath(plan.file, folder);
    refuseLinkedFile(plan, scope, shown);
    writableTarget(plan.file); // a read-only file is refused before the preview, not after the confirmation
    const after = plan.edit.after;
    if (after === null) {
      void vscode.window.showInformationMessage(`${name} is already connected in ${shown}; nothing changed.`);
      return false;
    }
    const action = plan.edit.changes.every((c) => c.action === 'updated') ? 'Update' : 'Connect';
    await this.preview.show(plan.file, plan.before, after, previewTitle(plan.file, `${action} ${name}`));
    const others = (await alsoConnectedIn(plan, folder)).map((o) => displayPath(o.file, folder));
    const answer = await vscode.window.showInformationMessage(
      `${action} ${name} in ${shown}?`,
      { modal: true, detail: confirmationDetail(plan, shown, others) },
      action,
    );
    if (answer !== action) {
      this.log.info('connect.cancelled', { agent: plan.agent.name, scope });
      return false;
    }
    // The preview showed these bytes: a file changed since (an editor, the agent) is planned again, not overwritten.
    if (readSettings(plan.file) !== plan.before) {
      void vscode.window.showWarningMessage(
        `${shown} changed while the preview was open; nothing was written. Connect again to see the new preview.`,
      );
      return false;
    }
    writeSettings(plan.file, after);
    this.log.info('connect.written', { agent: plan.agent.name, scope, changes: plan.edit.changes.length });
    this.connections.didChange();
    // What the user must still do in the agent (Codex's review of the hooks, a folder's trust), as the CLI says it.
    const steps = plan.agent.settings.userSteps?.(scope) ?? [];
    const done = `${action === 'Update' ? 'Updated' : 'Connected'} ${name} in ${shown}.`;
    void vscode.window
      .showInformationMessage(steps.length > 0 ? `${done} In ${name}: ${steps.join(' ')}` : done, 'Open File')
      .then((choice) => choice && vscode.window.showTextDocument(vscode.Uri.file(plan.file)));
    return true;
  }

  dispose(): void {
    this.preview.dispose();
  }
}

/**
 * A settings file that is a symbolic link is left alone here: its target is often shared (a dotfiles repository),
 * and the hook names this machine's paths. The CLI writes through links, for a user who asks for it in a terminal.
 */
function refuseLinkedFile(plan: ConnectionPlan, scope: SettingsScope, shown: string): void {
  let linked = false;
  try {
    linked = fs.lstatSync(plan.file).isSymbolicLink();
  } catch {
    // no file yet: nothing to refuse
  }
  if (!linked) return;
  throw new CliError(
    `${shown} is a symbolic link, so Agent Versions leaves it as it is (its target may be shared with other ` +
      'machines, and the hook names paths on this one); nothing was changed. To write through the link, run in a ' +
      `terminal: agent-versions connect ${plan.agent.name} --${scope}`,
    1,
  );
}

function confirmationDetail(plan: ConnectionPlan, shown: string, others: string[]): string {
  const byAction = (action: SettingsChange['action']) =>
    plan.edit.changes.filter((c) => c.action === action).map((c) => c.event);
  const lines: string[] = [];
  const added = byAction('added');
  const updated = byAction('updated');
  if (added.length > 0) lines.push(`Adds a hook for ${added.join(', ')} to ${shown}.`);
  if (updated.length > 0) lines.push(`Updates the hook for ${updated.join(', ')} to the current command.`);
  if (byAction('removed').length > 0) lines.push('Removes a duplicate of the hook.');
  lines.push(`The hook runs: ${plan.command}`);
  if (plan.commands.beforeTool.endsWith(' --guard-destructive'))
    lines.push('Before a destructive shell command, the agent is told not to run it and to ask you first.');
  lines.push('Every other byte of the file stays as it is; the diff editor shows exactly what will be written.');
  for (const other of others) lines.push(`Also connected in ${other}: every hook would run twice.`);
  return lines.join('\n');
}
