import * as vscode from 'vscode';
import { safeMessage } from '../core/errors';
import type { RepositoryController } from './repositoryController';
import { leftOutMessage, type SecretFinding } from '../core/versionHistory';

export const INCLUDE_IN_VERSIONS = 'Include in Versions';
export const ADD_TO_GITIGNORE = 'Add to .gitignore';

/**
 * Tells the user once per file left out of a version as a likely secret, with Include in Versions (remembered
 * for the path) and Add to .gitignore. Does not wait for the answer: the caller's turn is already recorded.
 */
export function showSecretNotices(controller: RepositoryController, excluded: readonly SecretFinding[]): void {
  for (const finding of excluded) void askAbout(controller, finding);
}

async function askAbout(controller: RepositoryController, finding: SecretFinding): Promise<void> {
  const choice = await vscode.window.showWarningMessage(
    leftOutMessage(finding.path),
    INCLUDE_IN_VERSIONS,
    ADD_TO_GITIGNORE,
  );
  if (!choice) return;
  try {
    if (choice === INCLUDE_IN_VERSIONS) await controller.history.includeSecretFile(finding.path);
    else await controller.history.gitignoreSecretFile(finding.path);
    controller.notifyChanged();
  } catch (error) {
    controller.log.warn('secrets.choice-failed', {
      choice: choice === INCLUDE_IN_VERSIONS ? 'include' : 'gitignore',
    });
    void vscode.window.showErrorMessage(`Agent Version History: ${safeMessage(error)}`);
  }
}
