import * as vscode from 'vscode';
import { relativeTime } from '../core/history/wording';
import { CHAT_COLORS, type LineAttributions } from './blameAttributions';
import { turnAuthor, turnTime } from './blameHover';
import { ownerBlocks } from '../core/versionHistory';

/** Remembered per workspace (off by default). */
const STATE_KEY = 'agentVersions.lineAnnotations';
export const TOGGLE_ANNOTATIONS_COMMAND = 'agentVersions.toggleLineAnnotations';
/** Test builds: what the annotations of the active editor show (content-free: blocks, chat numbers). */
export const ANNOTATIONS_TEST_COMMAND = 'agentVersions._test.lineAnnotations';

interface Shown {
  uri: string;
  blocks: { start: number; end: number; chatIndex: number }[];
}

/**
 * Line annotations for whole files (issue 26): each block of lines an agent turn wrote gets a bar in its chat's
 * colour (the Version History pane's colours, by the pane's chat number) and, on its first line, which turn wrote it.
 * Toggled by a command, remembered per workspace, off by default. Drawn from the cached attributions; redrawn when a
 * visible editor, its text or our records change.
 */
export class LineAnnotations implements vscode.Disposable {
  private readonly bars = CHAT_COLORS.map((colour) =>
    vscode.window.createTextEditorDecorationType({
      isWholeLine: true,
      borderWidth: '0 0 0 3px',
      borderStyle: 'solid',
      borderColor: new vscode.ThemeColor(`charts.${colour}`),
    }),
  );
  private readonly labels = vscode.window.createTextEditorDecorationType({
    after: { margin: '0 0 0 3em', color: new vscode.ThemeColor('editorCodeLens.foreground'), fontStyle: 'italic' },
  });
  private readonly disposables: vscode.Disposable[] = [];
  private timer: NodeJS.Timeout | undefined;
  private readonly shown = new Map<string, Shown>();

  constructor(
    private readonly state: vscode.Memento,
    private readonly attributions: LineAttributions,
  ) {
    this.disposables.push(
      vscode.window.onDidChangeVisibleTextEditors(() => this.schedule(0)),
      vscode.workspace.onDidChangeTextDocument((e) => {
        if (this.enabled && vscode.window.visibleTextEditors.some((ed) => ed.document === e.document))
          this.schedule(400);
      }),
      attributions.onDidChange(() => this.schedule(0)),
    );
    if (this.enabled) this.schedule(0);
  }

  get enabled(): boolean {
    return this.state.get<boolean>(STATE_KEY, false);
  }

  async toggle(): Promise<boolean> {
    const on = !this.enabled;
    await this.state.update(STATE_KEY, on);
    if (on) await this.render();
    else this.clear();
    void vscode.window.setStatusBarMessage(`Agent Version History: line annotations ${on ? 'on' : 'off'}`, 3000);
    return on;
  }

  /** What the active editor's annotations show (for the extension-host and end-to-end tests). */
  describeActive(): Shown | null {
    const uri = vscode.window.activeTextEditor?.document.uri.toString();
    return (uri && this.shown.get(uri)) || null;
  }

  private schedule(delay: number): void {
    if (!this.enabled) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.render();
    }, delay);
  }

  private async render(): Promise<void> {
    await Promise.all(vscode.window.visibleTextEditors.map((editor) => this.renderEditor(editor)));
  }

  private async renderEditor(editor: vscode.TextEditor): Promise<void> {
    const document = editor.document;
    const found = await this.attributions.of(document);
    // Off meanwhile, or the text changed since: the next render draws it.
    if (!this.enabled || !found || found.version !== document.version) return;
    const bars: vscode.Range[][] = CHAT_COLORS.map(() => []);
    const labels: vscode.DecorationOptions[] = [];
    const shown: Shown = { uri: document.uri.toString(), blocks: [] };
    const byStart = new Map(found.attribution.ranges.map((r) => [r.start, r]));
    const now = Date.now() / 1000;
    for (const block of ownerBlocks(found.attribution)) {
      const range = byStart.get(block.start);
      if (!range?.turn || block.end > document.lineCount) continue;
      const chatIndex = await this.attributions.chatIndex(found.controller, range.turn.chatId);
      const lines = new vscode.Range(block.start - 1, 0, block.end - 1, 0);
      bars[(chatIndex - 1) % CHAT_COLORS.length].push(lines);
      shown.blocks.push({ start: block.start, end: block.end, chatIndex });
      const when = turnTime(range);
      const state = range.turn.running ? ' (running)' : range.turn.via === 'version' ? '' : ' (not a version yet)';
      labels.push({
        range: document.lineAt(block.start - 1).range,
        renderOptions: {
          after: {
            contentText: `${turnAuthor(range.turn)} · ${range.turn.summary}${state} · ${relativeTime(now - when)}`,
          },
        },
      });
    }
    if (!this.enabled) return;
    this.bars.forEach((type, i) => editor.setDecorations(type, bars[i]));
    editor.setDecorations(this.labels, labels);
    this.shown.set(shown.uri, shown);
  }

  private clear(): void {
    for (const editor of vscode.window.visibleTextEditors) {
      for (const type of this.bars) editor.setDecorations(type, []);
      editor.setDecorations(this.labels, []);
    }
    this.shown.clear();
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    for (const d of [...this.disposables, ...this.bars, this.labels]) d.dispose();
  }
}
