import * as vscode from 'vscode';
import { relativeTime } from '../core/history/wording';
import type { LineAttributions } from './blameAttributions';
import { lineAt, type LineRange, type TurnAttribution } from '../core/versionHistory';

/** The commands a turn's hover offers (blameCommands.ts registers them; the hover's links may run only these). */
export const LINE_COMMANDS = {
  showTurnChanges: 'agentVersions.lineTurnChanges',
  undoChange: 'agentVersions.undoChange',
  undoFile: 'agentVersions.lineUndoFile',
  undoOnlyTurn: 'agentVersions.lineUndoOnlyTurn',
} as const;

/** What a line command acts on: the document, the 1-based line, and the turn the user saw there. */
export interface LineTarget {
  uri: string;
  line: number;
  turnId: string;
}

/** When the turn's lines were written, for people: the turn's end (else its start, else the commit's time). */
export function turnTime(range: LineRange): number {
  const ms = range.turn?.endedAt ?? range.turn?.startedAt ?? null;
  return ms !== null ? ms / 1000 : range.time;
}

/** "claude-code · chat Refactor": who wrote the line. */
export function turnAuthor(turn: TurnAttribution): string {
  const chat = turn.chatTitle ?? `${turn.chatId.slice(0, 8)}`;
  return `${turn.agent ?? 'agent'} · chat ${chat}`;
}

/**
 * The hover on a line an agent turn wrote (issue 26): the agent, the chat, the prompt's first line and when, with Show
 * Turn Changes, Undo This Change, Undo This File and Undo Only This Turn. Computed lazily and never on the typing
 * path (LineAttributions); a hover the editor no longer wants returns nothing, and the attribution stays cached.
 */
export class TurnHoverProvider implements vscode.HoverProvider {
  constructor(private readonly attributions: LineAttributions) {}

  async provideHover(
    document: vscode.TextDocument,
    position: vscode.Position,
    token: vscode.CancellationToken,
  ): Promise<vscode.Hover | undefined> {
    const controller = await this.attributions.controllerOf(document);
    if (!controller || token.isCancellationRequested) return undefined;
    const attribution =
      this.attributions.cached(document, controller) ??
      (await cancellable(this.attributions.of(document), token))?.attribution;
    if (!attribution || token.isCancellationRequested) return undefined;
    const range = lineAt(attribution, position.line + 1);
    if (!range?.turn) return undefined;
    const line = document.lineAt(position.line).range;
    return new vscode.Hover(hoverText(document.uri, position.line + 1, range, range.turn), line);
  }
}

/** Resolves with the promise's value, or undefined as soon as the token is cancelled (the promise runs on). */
function cancellable<T>(promise: Promise<T>, token: vscode.CancellationToken): Promise<T | undefined> {
  return new Promise((resolve) => {
    const listener = token.onCancellationRequested(() => resolve(undefined));
    void promise.then(
      (value) => {
        listener.dispose();
        resolve(value);
      },
      () => {
        listener.dispose();
        resolve(undefined);
      },
    );
  });
}

function commandLink(title: string, command: string, target: LineTarget, tooltip: string): string {
  const args = encodeURIComponent(JSON.stringify([target]));
  return `[${title}](command:${command}?${args} "${tooltip}")`;
}

/** The hover's text: prompt, chat and agent names are escaped (never markdown of ours). */
export function hoverText(
  uri: vscode.Uri,
  line: number,
  range: LineRange,
  turn: TurnAttribution,
): vscode.MarkdownString {
  const md = new vscode.MarkdownString('', true);
  md.isTrusted = { enabledCommands: Object.values(LINE_COMMANDS) };
  md.supportHtml = false;
  md.appendMarkdown('$(hubot) ');
  md.appendText(turnAuthor(turn));
  md.appendMarkdown(' · ');
  md.appendText(relativeTime(Date.now() / 1000 - turnTime(range)));
  md.appendMarkdown('\n\n**');
  md.appendText(turn.summary);
  md.appendMarkdown('**\n\n');
  if (turn.via === 'uncommitted' || turn.via === 'partial') {
    md.appendText(
      turn.running
        ? 'The turn is still running: this line is not a version yet.'
        : 'Partial work of a stopped turn, not a version yet: Undo Agent Turn takes it back (it is saved first).',
    );
    return md;
  }
  const target: LineTarget = { uri: uri.toString(), line, turnId: turn.id };
  md.appendMarkdown(
    [
      commandLink('Show Turn Changes', LINE_COMMANDS.showTurnChanges, target, "Open this turn's changes"),
      commandLink(
        'Undo This Change',
        LINE_COMMANDS.undoChange,
        target,
        "Take back only this turn's change of these lines, as a new [Revert] version",
      ),
      commandLink(
        'Undo This File',
        LINE_COMMANDS.undoFile,
        target,
        'Put this file back to its content before the turn',
      ),
      commandLink(
        'Undo Only This Turn',
        LINE_COMMANDS.undoOnlyTurn,
        target,
        "Take back this turn's changes, keeping later work",
      ),
    ].join(' · '),
  );
  if (turn.undone) {
    md.appendMarkdown('\n\n');
    md.appendText('A later restore brought these lines back after the turn was undone.');
  }
  return md;
}
