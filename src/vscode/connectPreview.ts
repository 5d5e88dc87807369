import * as path from 'node:path';
import * as vscode from 'vscode';

/**
 * What connecting would write, shown before anything is written: a diff editor between the settings file's bytes
 * now and the planned ones, both read-only virtual documents (nothing on disk changes until the user confirms).
 */

const SCHEME = 'agent-versions-preview';

export class ConnectPreview implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly texts = new Map<string, string>();
  private next = 0;
  private readonly registration = vscode.workspace.registerTextDocumentContentProvider(SCHEME, this);

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.texts.get(uri.query) ?? '';
  }

  /** Opens the diff of `file` from `before` (null: no file yet) to `after`; resolves once it is shown. */
  async show(file: string, before: string | null, after: string, title: string): Promise<void> {
    const id = String(++this.next);
    this.texts.set(`before-${id}`, before ?? '');
    this.texts.set(`after-${id}`, after);
    // The file's own path and name, so the editor picks its language (JSON) and the tab reads as the file.
    const uri = (side: string) => vscode.Uri.from({ scheme: SCHEME, path: file, query: `${side}-${id}` });
    await vscode.commands.executeCommand('vscode.diff', uri('before'), uri('after'), title, { preview: true });
  }

  /** Closes every preview tab and forgets their texts. */
  async close(): Promise<void> {
    const tabs = vscode.window.tabGroups.all
      .flatMap((g) => g.tabs)
      .filter((t) => t.input instanceof vscode.TabInputTextDiff && t.input.modified.scheme === SCHEME);
    if (tabs.length > 0) await vscode.window.tabGroups.close(tabs);
    this.texts.clear();
  }

  dispose(): void {
    this.registration.dispose();
  }
}

/** The preview's title: `settings.json (preview of Connect Claude Code)`. */
export function previewTitle(file: string, action: string): string {
  return `${path.basename(file)} (preview of ${action})`;
}
