import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { useLauncher } from '../cli/installation';
import { defaultLauncherFile, installLauncher, LauncherTarget } from '../cli/launcherScript';
import type { EventLog } from '../core/log';

/**
 * At every activation: points the launcher (cli/launcherScript.ts) at this installation, so hook commands written
 * before the last update run the current version, and puts its folder first on PATH in VS Code's integrated
 * terminals, so `agent-versions` works there. Returns the launcher, or null when there is none (Windows, a build
 * without the CLI bundles, a home folder we cannot write): hook commands then name this installation directly.
 */
export function installHookLauncher(context: vscode.ExtensionContext, log: EventLog): string | null {
  const launcher = writeLauncher(context, log);
  useLauncher(launcher);
  const terminals = context.environmentVariableCollection;
  if (launcher === null) {
    terminals.clear();
    return null;
  }
  terminals.description = 'Puts the agent-versions command on PATH.';
  terminals.prepend('PATH', `${path.dirname(launcher)}${path.delimiter}`);
  return launcher;
}

function writeLauncher(context: vscode.ExtensionContext, log: EventLog): string | null {
  if (process.platform === 'win32') return null; // the launcher is a POSIX shell script
  const cli = path.join(context.extensionPath, 'dist', 'cli.js');
  if (!fs.existsSync(cli)) {
    log.info('launcher.skipped', { reason: 'no-cli-bundle' });
    return null;
  }
  const target: LauncherTarget = {
    file: defaultLauncherFile(),
    cli,
    runtime: process.execPath,
    siblings: siblingsOf(context),
  };
  try {
    const result = installLauncher(target);
    log.info('launcher.installed', { result });
    return result === 'foreign' ? null : target.file;
  } catch (error) {
    log.warn('launcher.failed', { code: (error as NodeJS.ErrnoException).code ?? 'error' });
    return null;
  }
}

/**
 * Where the other versions of this extension are installed: VS Code names each folder `<publisher.name>-<version>`
 * (lower case) in one extensions folder. None for an extension run from elsewhere (a development checkout).
 */
function siblingsOf(context: vscode.ExtensionContext): LauncherTarget['siblings'] {
  const prefix = `${context.extension.id.toLowerCase()}-`;
  return path.basename(context.extensionPath).toLowerCase().startsWith(prefix)
    ? { dir: path.dirname(context.extensionPath), prefix: path.basename(context.extensionPath).slice(0, prefix.length) }
    : undefined;
}
