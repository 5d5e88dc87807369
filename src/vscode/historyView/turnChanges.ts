// Show Changes of a turn listed above the versions (running, or stopped with its work in the tree): its base
// snapshot against the working tree, in VS Code's multi-file diff, as the versions' Show Changes opens theirs
// (src/vscode/versionChanges.ts). The left side is the base's blob (an `agent-version:` document), the right side
// the real file, so the diff follows the agent's edits as they land.
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { RepositoryController } from '../repositoryController';
import { versionFileUri } from '../versionChanges';

/** Opens the diff of `turnId`'s changes so far; returns how many files it shows (0: a message says none). */
export async function showTurnChangesSoFar(
  controller: RepositoryController,
  turnId: string,
  title: string,
): Promise<number> {
  const { base, files } = await controller.history.turnChangesSoFar(turnId);
  const root = controller.root;
  const resources = files.map((f): [vscode.Uri, vscode.Uri | undefined, vscode.Uri | undefined] => {
    const file = vscode.Uri.file(path.join(root, f.path));
    return [
      file,
      f.status === 'added' ? undefined : versionFileUri(root, base, f.path, base),
      f.status === 'deleted' ? undefined : file,
    ];
  });
  if (resources.length === 0) {
    void vscode.window.showInformationMessage(`${title} has changed no files so far.`);
    return 0;
  }
  await vscode.commands.executeCommand('vscode.changes', `${title} (changes so far)`, resources);
  return resources.length;
}
