// The palette's pickers behind Undo Agent Turn, Undo This File and Restore Version… (registerRestoreCommands in
// restoreCommands.ts): each turns the user's choice into the RestoreRequest the runner performs.

import * as vscode from 'vscode';
import { AvhError } from '../core/errors';
import { KIND_LABEL, relativeTime } from '../core/history/wording';
import type { RepositoryController } from './repositoryController';
import type { RepositoryRegistry } from './repositoryRegistry';
import { versionFileOf, workspaceControllerFor } from './versionChanges';
import { literalPickText } from './pickText';
import type { RestoreRequest } from '../core/versionHistory';

/**
 * Undo Agent Turn: the latest turn of the chat the user picks when several chats have turns on this branch (the
 * latest chat first and preselected); with one chat, its latest turn without asking.
 */
export async function pickChatTurn(controller: RepositoryController): Promise<RestoreRequest | undefined> {
  const turns = await controller.history.undoableTurns();
  if (turns.length <= 1) return { kind: 'undo' };
  const now = Date.now() / 1000;
  const picked = await vscode.window.showQuickPick(
    turns.map((t, i) => ({
      label: literalPickText(t.chatTitle ?? `Chat ${t.chatId.slice(0, 8)}`),
      description: `${i === 0 ? 'latest · ' : ''}${t.agent ?? 'agent'} · ${relativeTime(now - t.createdAt / 1000)}`,
      detail: literalPickText(t.summary),
      turnId: t.turnId,
    })),
    {
      title: 'Undo Agent Turn — which chat?',
      placeHolder: 'Pick the chat whose latest turn to undo (the latest chat is first)',
      matchOnDescription: true,
      matchOnDetail: true,
    },
  );
  return picked ? { kind: 'undo', turnId: picked.turnId } : undefined;
}

/** Undo This File: the file of an `agent-version:` document (either side of a turn's diff), or the active one. */
export async function turnFileRequest(
  registry: RepositoryRegistry,
  uri: unknown,
): Promise<{ controller: RepositoryController; request: RestoreRequest }> {
  const target = uri instanceof vscode.Uri ? uri : vscode.window.activeTextEditor?.document.uri;
  const file = target ? versionFileOf(target) : null;
  if (!file)
    throw new AvhError(
      'invalid-input',
      "Undo This File works on a file of a turn's changes: open them with Show Turn Changes first.",
    );
  const controller = await workspaceControllerFor(registry, file.root);
  const turnId = await controller.history.turnOfVersion(file.version);
  if (!turnId)
    throw new AvhError(
      'invalid-input',
      "These changes are not an agent turn's version, so there is no turn to undo the file from.",
    );
  return { controller, request: { kind: 'undo', turnId, path: file.path } };
}

export async function pickVersion(controller: RepositoryController): Promise<RestoreRequest | undefined> {
  const versions = await controller.history.getVersions(500);
  const now = Date.now() / 1000;
  const picked = await vscode.window.showQuickPick(
    versions.map((v) => ({
      label: literalPickText(v.subject),
      description: [
        KIND_LABEL[v.kind] + (v.outcome ? ` · ${v.outcome}` : ''),
        v.oid.slice(0, 7),
        relativeTime(now - v.time),
      ].join(' · '),
      oid: v.oid,
    })),
    {
      title: 'Version History — restore a version',
      placeHolder: 'Pick the version to restore (a new [Restore] version is added; nothing is rewritten)',
      matchOnDescription: true,
    },
  );
  return picked ? { kind: 'restore', target: picked.oid } : undefined;
}
