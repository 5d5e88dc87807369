import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { isAvhError } from '../core/errors';
import type { EventLog } from '../core/log';
import type { RepositoryController } from './repositoryController';
import type { RepositoryRegistry } from './repositoryRegistry';
import { AttributionCache, attributionKey, type FileAttribution, guessBranchTip } from '../core/versionHistory';

/** What a document's lines are attributed to, with the repository they were attributed in. */
export interface DocumentAttribution {
  controller: RepositoryController;
  attribution: FileAttribution;
  /** The document version it was computed for. */
  version: number;
}

interface Pending {
  key: string;
  promise: Promise<DocumentAttribution | null>;
  abort: AbortController;
}

/** The document's file by its real path (git names the repository's root by its real path too). */
export function realFsPath(document: vscode.TextDocument): string {
  try {
    return fs.realpathSync(document.uri.fsPath);
  } catch {
    return document.uri.fsPath; // gone: attribution says so by name
  }
}

/** The pane's chat colours (VersionEntry.svelte: `--vscode-charts-<colour>` by the chat's 1-based index). */
export const CHAT_COLORS = ['blue', 'green', 'purple', 'orange', 'yellow', 'red'] as const;

/**
 * The editor's line attributions (issue 26): computed lazily (on the first hover of a file, or when annotations are
 * on), cached per file, HEAD commit, document version and state of our records (AttributionCache), and never on the
 * typing path: the blame runs in a git process (through the launcher), and a computation for a document version that
 * changed, or for an editor the user left, is cancelled — its git process killed.
 */
export class LineAttributions implements vscode.Disposable {
  private readonly cache = new AttributionCache(64);
  /** Bumped whenever our records or HEAD change (the registry's change event): older cache keys never match again. */
  private generation = 0;
  private readonly pending = new Map<string, Pending>();
  private readonly changed = new vscode.EventEmitter<void>();
  /** Our records or a repository changed: attributions shown may be stale. */
  readonly onDidChange = this.changed.event;
  private readonly disposables: vscode.Disposable[] = [];
  private readonly chatIndexes = new Map<string, Promise<Map<string, number>>>();
  /** The repository of each folder a document was in (resolving one runs git: once per folder). */
  private readonly folders = new Map<string, Promise<RepositoryController | null>>();

  constructor(
    private readonly registry: RepositoryRegistry,
    private readonly log: EventLog,
  ) {
    this.disposables.push(
      registry.onDidChange(() => {
        this.generation++;
        this.cache.clear();
        this.chatIndexes.clear();
        this.changed.fire();
      }),
      // The editor changed: a computation for an older version of the document is of no use any more.
      vscode.workspace.onDidChangeTextDocument((e) => this.cancel(e.document.uri.toString())),
      vscode.workspace.onDidCloseTextDocument((d) => {
        this.cancel(d.uri.toString());
        this.cache.forget(d.uri.toString());
      }),
      vscode.window.onDidChangeVisibleTextEditors((editors) => {
        const visible = new Set(editors.map((e) => e.document.uri.toString()));
        for (const uri of this.pending.keys()) if (!visible.has(uri)) this.cancel(uri);
      }),
      this.changed,
    );
  }

  /**
   * The attribution of `document` as it is now (its unsaved text included), from the cache when nothing changed; null
   * for a document outside any repository, a binary or missing file, or a computation that was cancelled.
   */
  async of(document: vscode.TextDocument): Promise<DocumentAttribution | null> {
    const controller = await this.controllerOf(document);
    if (!controller) return null;
    const uri = document.uri.toString();
    const key = this.keyOf(controller, document);
    const hit = this.cache.get(key);
    if (hit) return { controller, attribution: hit, version: document.version };
    const running = this.pending.get(uri);
    if (running?.key === key) return running.promise;
    this.cancel(uri);
    const abort = new AbortController();
    const version = document.version;
    const promise = controller.history
      .attributeFile(realFsPath(document), {
        // The file as saved is read by git itself (its encoding and line ends as stored); unsaved text is sent.
        ...(document.isDirty ? { contents: document.getText() } : {}),
        signal: abort.signal,
      })
      .then(
        (attribution) => {
          this.cache.set(key, attribution);
          return { controller, attribution, version };
        },
        (error: unknown) => {
          const reason = isAvhError(error) ? error.reason : 'unexpected';
          if (reason !== 'cancelled' && reason !== 'binary-file' && reason !== 'no-such-file')
            this.log.warn('blame.failed', { reason });
          return null;
        },
      )
      .finally(() => {
        if (this.pending.get(uri)?.promise === promise) this.pending.delete(uri);
      });
    this.pending.set(uri, { key, promise, abort });
    return promise;
  }

  /** The attribution already computed for the document as it is now, without starting one (the hover's fast path). */
  cached(document: vscode.TextDocument, controller: RepositoryController): FileAttribution | undefined {
    return this.cache.get(this.keyOf(controller, document));
  }

  /**
   * The 1-based chat numbers the Version History pane shows (its rows' `chatIndex`, so a chat has the same colour in
   * the editor as in the pane); chats not on the pane's first page get the numbers after them.
   */
  chatIndex(controller: RepositoryController, chatId: string): Promise<number> {
    let indexes = this.chatIndexes.get(controller.root);
    if (!indexes) {
      indexes = controller.history.versionsView(200).then(
        (view) => {
          const found = new Map<string, number>();
          if (view.kind === 'versions')
            for (const row of view.rows)
              if (row.turn && row.turn.chatIndex > 0) found.set(row.turn.chatId, row.turn.chatIndex);
          return found;
        },
        () => new Map<string, number>(),
      );
      this.chatIndexes.set(controller.root, indexes);
    }
    return indexes.then((found) => {
      if (!found.has(chatId)) found.set(chatId, Math.max(0, ...found.values()) + 1);
      return found.get(chatId)!;
    });
  }

  private keyOf(controller: RepositoryController, document: vscode.TextDocument): string {
    const head = guessBranchTip(controller.history.repository.gitDir)?.head ?? null;
    return attributionKey({
      path: document.uri.toString(),
      head,
      factsStamp: `${this.generation}:${document.version}`,
    });
  }

  /** The repository controller of a document in a workspace folder, or null (not in a git repository). */
  controllerOf(document: vscode.TextDocument): Promise<RepositoryController | null> {
    if (document.uri.scheme !== 'file' || !vscode.workspace.getWorkspaceFolder(document.uri))
      return Promise.resolve(null);
    const folder = path.dirname(document.uri.fsPath);
    let found = this.folders.get(folder);
    if (!found) {
      found = this.registry.forPath(folder).catch(() => null);
      // A folder that becomes a repository later (Enable Version History) is asked again next time.
      void found.then((c) => c ?? this.folders.delete(folder));
      this.folders.set(folder, found);
    }
    return found;
  }

  private cancel(uri: string): void {
    const running = this.pending.get(uri);
    if (!running) return;
    this.pending.delete(uri);
    running.abort.abort();
  }

  dispose(): void {
    for (const uri of [...this.pending.keys()]) this.cancel(uri);
    for (const d of this.disposables) d.dispose();
  }
}
