import * as path from 'node:path';
import * as vscode from 'vscode';
import { AvhError, safeMessage } from '../core/errors';
import type { EventLog } from '../core/log';
import { ANNOTATIONS_TEST_COMMAND, LineAnnotations, TOGGLE_ANNOTATIONS_COMMAND } from './blameAnnotations';
import { LineAttributions, realFsPath } from './blameAttributions';
import { LINE_COMMANDS, type LineTarget, TurnHoverProvider } from './blameHover';
import type { RepositoryController } from './repositoryController';
import type { RepositoryRegistry } from './repositoryRegistry';
import type { RestoreRunner } from './restoreCommands';
import { showVersionChanges } from './versionChanges';
import { literalPickText } from './pickText';
import { lineAt, type LineRange } from '../core/versionHistory';

/** Test builds: the hover of the active editor's cursor line, timed in the extension host (content-free result). */
export const HOVER_TEST_COMMAND = 'agentVersions._test.lineHover';

/** A line of a document, the repository it is in, and who wrote it. */
interface PointedLine {
  document: vscode.TextDocument;
  controller: RepositoryController;
  /** 1-based. */
  line: number;
  range: LineRange & { turn: NonNullable<LineRange['turn']> };
}

/**
 * "Which turn wrote this line?" in the editor (issue 26): the hover, the line annotations, and the commands the hover
 * links to. Show Turn Changes and the three Undos run exactly what the palette and the Version History pane run
 * (showVersionChanges, RestoreRunner.perform: the same confirmation, progress and result notification).
 */
export function registerBlame(
  context: vscode.ExtensionContext,
  registry: RepositoryRegistry,
  runner: RestoreRunner,
  log: EventLog,
): LineAttributions {
  const attributions = new LineAttributions(registry, log);
  const annotations = new LineAnnotations(context.workspaceState, attributions);
  const failed = (error: unknown) => {
    log.warn('blame.command-failed', { reason: error instanceof AvhError ? error.reason : 'unexpected' });
    void vscode.window.showErrorMessage(`Agent Version History: ${safeMessage(error)}`);
  };
  /** A command on a pointed line: the hover's target, else the active editor's cursor line. */
  const onLine = (act: (pointed: PointedLine) => Promise<void>) => async (target?: unknown) => {
    let pointed: PointedLine;
    try {
      pointed = await pointedLine(attributions, target);
    } catch (error) {
      failed(error);
      return;
    }
    await act(pointed);
  };
  context.subscriptions.push(
    attributions,
    annotations,
    vscode.languages.registerHoverProvider({ scheme: 'file' }, new TurnHoverProvider(attributions)),
    vscode.commands.registerCommand(TOGGLE_ANNOTATIONS_COMMAND, () => annotations.toggle()),
    vscode.commands.registerCommand(
      LINE_COMMANDS.showTurnChanges,
      onLine(async ({ controller, range }) => {
        if (!range.commit) return void vscode.window.showInformationMessage(NOT_A_VERSION);
        await showVersionChanges(controller, range.commit, range.turn.summary).catch(failed);
      }),
    ),
    vscode.commands.registerCommand(
      LINE_COMMANDS.undoChange,
      onLine(async ({ document, controller, line, range }) => {
        if (document.isDirty) {
          void vscode.window.showWarningMessage(
            `Save ${path.basename(document.uri.fsPath)} first: Undo This Change takes the change back from the file ` +
              'as saved. Nothing was changed.',
          );
          return;
        }
        const change = { path: repositoryRelative(controller, document), line };
        await runner.perform(controller, { kind: 'undo', turnId: range.turn.id, change }, 'Undo This Change');
      }),
    ),
    vscode.commands.registerCommand(
      LINE_COMMANDS.undoFile,
      onLine(({ controller, range }) =>
        runner.perform(controller, { kind: 'undo', turnId: range.turn.id, path: range.origin.path }, 'Undo This File'),
      ),
    ),
    vscode.commands.registerCommand(
      LINE_COMMANDS.undoOnlyTurn,
      onLine(({ controller, range }) =>
        runner.perform(controller, { kind: 'undo', turnId: range.turn.id, only: 'turn' }, 'Undo Only This Turn'),
      ),
    ),
  );
  if (typeof AVH_PRODUCTION_BUILD === 'undefined')
    context.subscriptions.push(
      vscode.commands.registerCommand(ANNOTATIONS_TEST_COMMAND, () => annotations.describeActive()),
      vscode.commands.registerCommand(HOVER_TEST_COMMAND, () => timedHover()),
    );
  return attributions;
}

const NOT_A_VERSION = 'This line is not in a version yet: the turn that is writing it has made no commit.';

/** The line a command acts on, refused clearly when no agent turn wrote it (or another one does now). */
async function pointedLine(attributions: LineAttributions, target: unknown): Promise<PointedLine> {
  const given = isLineTarget(target) ? target : null;
  const editor = vscode.window.activeTextEditor;
  const document = given ? await vscode.workspace.openTextDocument(vscode.Uri.parse(given.uri)) : editor?.document;
  if (!document) throw new AvhError('invalid-input', 'Open a file and put the cursor on a line an agent turn wrote.');
  const line = given ? given.line : editor!.selection.active.line + 1;
  const found = await attributions.of(document);
  if (!found)
    throw new AvhError(
      'not-a-turn-change',
      'Version History cannot tell who wrote the lines of this file (it is not a text file in a repository).',
    );
  const range = lineAt(found.attribution, line);
  if (!range?.turn) throw new AvhError('not-a-turn-change', 'No agent turn wrote this line.');
  if (given && range.turn.id !== given.turnId)
    throw new AvhError('not-a-turn-change', 'This line changed since: another turn or edit wrote it now.');
  return { document, controller: found.controller, line, range: range as PointedLine['range'] };
}

function isLineTarget(value: unknown): value is LineTarget {
  const v = value as Partial<LineTarget> | null;
  return (
    typeof v === 'object' &&
    v !== null &&
    typeof v.uri === 'string' &&
    typeof v.turnId === 'string' &&
    typeof v.line === 'number' &&
    Number.isInteger(v.line) &&
    v.line >= 1
  );
}

/** The document's path as the repository names it (its real path: the repository root is resolved by git). */
function repositoryRelative(controller: RepositoryController, document: vscode.TextDocument): string {
  return path.relative(controller.root, realFsPath(document)).split(path.sep).join('/');
}

/** Test builds: the hover at the active editor's cursor, through VS Code's own hover machinery, timed. */
async function timedHover(): Promise<{ ms: number; texts: string[] }> {
  const editor = vscode.window.activeTextEditor;
  if (!editor) return { ms: -1, texts: [] };
  const started = performance.now();
  const hovers = await vscode.commands.executeCommand<vscode.Hover[]>(
    'vscode.executeHoverProvider',
    editor.document.uri,
    editor.selection.active,
  );
  const ms = performance.now() - started;
  const texts = (hovers ?? []).flatMap((h) =>
    h.contents.map((c) => (typeof c === 'string' ? c : 'value' in c ? c.value : '')),
  );
  return { ms, texts };
}

/**
 * The Version History row's "Lines It Still Owns" (issue 26): how many lines of the working tree the turn wrote, per
 * file; picking a file opens it at the turn's first line there.
 */
export async function showLinesOwned(controller: RepositoryController, turnId: string, label: string): Promise<void> {
  const owned = await controller.history.linesOwnedBy(turnId);
  const gone = owned.gone > 0 ? ` (${owned.gone} file${owned.gone === 1 ? '' : 's'} it changed are gone)` : '';
  if (owned.lines === 0) {
    void vscode.window.showInformationMessage(
      `Turn "${label}" owns no lines of the current files any more: later work or an undo replaced them.${gone}`,
    );
    return;
  }
  const plural = (n: number, one: string) => `${n} ${one}${n === 1 ? '' : 's'}`;
  const files = plural(owned.files.length, 'file');
  const picked = await vscode.window.showQuickPick(
    owned.files.map((f) => ({ label: literalPickText(f.path), description: plural(f.lines, 'line'), file: f })),
    {
      title: `Turn "${label}" still owns ${plural(owned.lines, 'line')} in ${files}${gone}`,
      placeHolder: 'Pick a file to open it at the turn’s first line there',
    },
  );
  if (!picked) return;
  const document = await vscode.workspace.openTextDocument(
    vscode.Uri.file(path.join(controller.root, picked.file.path)),
  );
  const at = new vscode.Position(picked.file.first - 1, 0);
  await vscode.window.showTextDocument(document, { selection: new vscode.Range(at, at) });
}
