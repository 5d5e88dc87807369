import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { AvhError, safeMessage } from '../core/errors';
import type { EventLog } from '../core/log';
import { KIND_LABEL, relativeTime } from '../core/history/wording';
import type { RepositoryController } from './repositoryController';
import type { RepositoryRegistry } from './repositoryRegistry';

/**
 * Read-only documents of a file as it was in a version: `agent-version:/<path>?<json {root, oid, of?}>`; `of` is
 * the version whose changes the diff shows (both sides carry it, so Undo This File knows the turn on either side).
 */
export const VERSION_FILE_SCHEME = 'agent-version';
export const SHOW_TURN_CHANGES_COMMAND = 'agentVersions.showTurnChanges';
/** Undo This File, in the editor title of a turn's diff (registered with the other restore commands). */
export const UNDO_FILE_COMMAND = 'agentVersions.undoFile';

/** Serves `agent-version:` documents from git objects (never the working tree); a binary file shows a one-line note. */
export class VersionFileProvider implements vscode.TextDocumentContentProvider {
  constructor(private readonly registry: RepositoryRegistry) {}

  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    const { root, oid } = parseQuery(uri.query);
    const controller = await workspaceControllerFor(this.registry, root);
    const text = await controller.history.fileAt(oid, uri.path.replace(/^\//, ''));
    if (text === null) return '';
    return text.slice(0, 8000).includes('\0') ? `Binary file (${text.length} bytes) — not shown as text.` : text;
  }
}

/**
 * The controller of `root`, a repository an `agent-version:` document names, only when it is a repository of this
 * workspace. Any link can name any folder (a markdown preview, another extension, `vscode.open`), and opening a
 * repository runs git with that repository's configuration (fsmonitor, filters: code), which the workspace trust
 * gate exists to prevent: a root outside the workspace is refused before git runs there.
 */
export async function workspaceControllerFor(
  registry: RepositoryRegistry,
  root: string,
): Promise<RepositoryController> {
  if (!(await isWorkspaceRepository(registry, root)))
    throw new AvhError(
      'invalid-input',
      'This document names a repository outside this workspace; Agent Version History opens only the ' +
        "workspace's repositories.",
    );
  return registry.forPath(root);
}

/**
 * Whether `root` lies in a local workspace folder (by real path: a symlink cannot lead out) or is the repository of
 * one, or one opened so far. Runs git only in the workspace folders.
 */
async function isWorkspaceRepository(registry: RepositoryRegistry, root: string): Promise<boolean> {
  if (!path.isAbsolute(root)) return false;
  const real = await fs.promises.realpath(root).catch(() => null);
  if (real === null) return false;
  for (const folder of vscode.workspace.workspaceFolders ?? []) {
    if (folder.uri.scheme !== 'file') continue;
    const base = await fs.promises.realpath(folder.uri.fsPath).catch(() => null);
    const inside = base === null ? null : path.relative(base, real);
    if (inside !== null && inside !== '..' && !inside.startsWith(`..${path.sep}`) && !path.isAbsolute(inside))
      return true;
  }
  return (await registry.repositories()).includes(real);
}

function parseQuery(query: string): { root: string; oid: string; of?: string } {
  try {
    const parsed = JSON.parse(query) as unknown;
    if (
      parsed &&
      typeof parsed === 'object' &&
      typeof (parsed as { root?: unknown }).root === 'string' &&
      typeof (parsed as { oid?: unknown }).oid === 'string'
    ) {
      const of = (parsed as { of?: unknown }).of;
      return { ...(parsed as { root: string; oid: string }), ...(typeof of === 'string' ? { of } : {}) };
    }
  } catch {
    /* reported below */
  }
  throw new AvhError('invalid-input', 'This is not an Agent Version History document.');
}

/**
 * The repository, the version whose changes are shown, and the path of an `agent-version:` document; null for any
 * other.
 */
export function versionFileOf(uri: vscode.Uri): { root: string; version: string; path: string } | null {
  if (uri.scheme !== VERSION_FILE_SCHEME) return null;
  try {
    const { root, oid, of } = parseQuery(uri.query);
    return { root, version: of ?? oid, path: uri.path.replace(/^\//, '') };
  } catch {
    return null;
  }
}

export function versionFileUri(root: string, oid: string, file: string, of: string): vscode.Uri {
  return vscode.Uri.from({
    scheme: VERSION_FILE_SCHEME,
    path: `/${file}`,
    query: JSON.stringify({ root, oid, ...(of !== oid ? { of } : {}) }),
  });
}

/**
 * Opens VS Code's multi-file diff editor (`vscode.changes`) for a version against its first parent: one
 * `[label, left, right]` per file; an added file has no left side, a deleted one no right side.
 */
export async function showVersionChanges(
  controller: RepositoryController,
  oid: string,
  title: string,
): Promise<number> {
  const { parent, files } = await controller.history.changedFiles(oid);
  const root = controller.root;
  const resources = files.map((f): [vscode.Uri, vscode.Uri | undefined, vscode.Uri | undefined] => [
    vscode.Uri.file(path.join(root, f.path)),
    f.status === 'added' || !parent ? undefined : versionFileUri(root, parent, f.path, oid),
    f.status === 'deleted' ? undefined : versionFileUri(root, oid, f.path, oid),
  ]);
  if (resources.length === 0) {
    void vscode.window.showInformationMessage(`${title} changed no files.`);
    return 0;
  }
  await vscode.commands.executeCommand('vscode.changes', `${title} (${oid.slice(0, 7)})`, resources);
  return resources.length;
}

/** `Agent Versions: Show Turn Changes`: the latest agent turn's changes, or a picked turn's. */
export function registerShowTurnChanges(
  context: vscode.ExtensionContext,
  registry: RepositoryRegistry,
  log: EventLog,
): void {
  context.subscriptions.push(
    vscode.workspace.registerTextDocumentContentProvider(VERSION_FILE_SCHEME, new VersionFileProvider(registry)),
    vscode.commands.registerCommand(SHOW_TURN_CHANGES_COMMAND, async (oid?: unknown) => {
      try {
        const controller = await registry.forAction(); // a folder without git: offers to Enable Version History
        const view = await controller.history.versionsView(500);
        if (view.kind === 'blocked') return; // the recovery notice explains it
        const turns = view.kind === 'versions' ? view.rows.filter((r) => r.kind === 'agent') : [];
        if (turns.length === 0) {
          void vscode.window.showInformationMessage('There is no agent turn on this branch yet.');
          return;
        }
        const now = Date.now() / 1000;
        const picked =
          typeof oid === 'string'
            ? turns.find((t) => t.oid === oid)
            : turns.length === 1
              ? turns[0]
              : (
                  await vscode.window.showQuickPick(
                    turns.map((t, i) => ({
                      label: t.label,
                      description:
                        (i === 0 ? 'latest · ' : '') +
                        [
                          KIND_LABEL[t.kind] + (t.turn?.outcome ? ` · ${t.turn.outcome}` : ''),
                          t.oid.slice(0, 7),
                          relativeTime(now - t.time),
                        ].join(' · '),
                      row: t,
                    })),
                    {
                      title: 'Show Turn Changes',
                      placeHolder: 'Pick the agent turn whose changes to show (the latest is first)',
                    },
                  )
                )?.row;
        if (picked) await showVersionChanges(controller, picked.oid, picked.label);
      } catch (error) {
        log.warn('changes.failed', { reason: error instanceof AvhError ? error.reason : 'unexpected' });
        void vscode.window.showErrorMessage(`Agent Version History: ${safeMessage(error)}`);
      }
    }),
  );
}
