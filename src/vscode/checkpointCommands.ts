// Restore to Before This Command (issue 34; docs/design/command-checkpoints.md) from the palette, and the
// end-of-turn notice that names a destructive command whose files are gone at the turn's end. Both go through the
// one RestoreRunner path, as the Version History view's step button does.
import * as vscode from 'vscode';
import { AvhError } from '../core/errors';
import type { EventLog } from '../core/log';
import type { CheckpointStep } from '../core/versionHistory';
export { RESTORE_BEFORE_COMMAND } from '../core/history/wording';
import { checkpointNoticeText, relativeTime, RESTORE_BEFORE_COMMAND } from '../core/history/wording';
import type { RepositoryController } from './repositoryController';
import type { RepositoryRegistry } from './repositoryRegistry';
import { literalPickText } from './pickText';
import type { BeforeCommandRequest, RestoreRunner } from './restoreCommands';

export const RESTORE_BEFORE_COMMAND_COMMAND = 'agentVersions.restoreBeforeCommand';
/** How many checkpoints the palette's pick lists, newest first. */
const PICK_LIMIT = 100;

/** The runner's request for a checkpoint of this repository (refused clearly when it has none with that id). */
export async function beforeCommandRequest(
  controller: RepositoryController,
  checkpointId: string,
): Promise<BeforeCommandRequest> {
  const checkpoint = await controller.history.checkpoint(checkpointId);
  if (!checkpoint)
    throw new AvhError('invalid-input', 'This checkpoint is no longer in Version History (its turn was pruned).');
  return { kind: 'beforeCommand', checkpointId, commit: checkpoint.commit, label: checkpoint.label };
}

/** Restore to Before This Command… from the palette: a pick of the repository's checkpoints, newest first. */
export function registerCheckpointCommands(
  context: vscode.ExtensionContext,
  registry: RepositoryRegistry,
  runner: RestoreRunner,
): void {
  context.subscriptions.push(
    vscode.commands.registerCommand(RESTORE_BEFORE_COMMAND_COMMAND, async () => {
      let controller: RepositoryController;
      let request: BeforeCommandRequest | undefined;
      try {
        controller = await registry.forAction();
        request = await pickCheckpoint(controller);
      } catch (error) {
        runner.reportFailure('beforeCommand', error);
        return;
      }
      if (request) await runner.perform(controller, request, RESTORE_BEFORE_COMMAND);
    }),
  );
}

async function pickCheckpoint(controller: RepositoryController): Promise<BeforeCommandRequest | undefined> {
  const history = controller.history;
  const all = (await history.checkpoints()).reverse().slice(0, PICK_LIMIT);
  if (all.length === 0) {
    void vscode.window.showInformationMessage(
      'No checkpoints yet: one is taken when an agent runs a destructive command (git reset --hard, git clean, ' +
        'rm -rf …) during a recorded turn.',
    );
    return undefined;
  }
  const now = Date.now() / 1000;
  const items = await Promise.all(
    all.map(async (c) => ({
      label: `before \`${c.label}\``,
      description: [
        relativeTime(now - c.createdAt / 1000),
        `turn ${c.turnId.slice(0, 8)}`,
        ...(c.savedFiles > 0 ? [`${c.savedFiles} ignored file${c.savedFiles === 1 ? '' : 's'} saved`] : []),
      ].join(' · '),
      // The command the agent ran, shown as a prompt is (never logged), exactly as written: the pick would draw a
      // `$(pwd)` in it as an icon.
      detail: literalPickText((await history.checkpointCommand(c.id)) ?? undefined),
      checkpoint: c,
    })),
  );
  const picked = await vscode.window.showQuickPick(items, {
    title: `${RESTORE_BEFORE_COMMAND} — which command?`,
    placeHolder: 'Pick the command to go back to just before (newest first; a new [Restore] version is added)',
    matchOnDescription: true,
    matchOnDetail: true,
  });
  if (!picked) return undefined;
  const c = picked.checkpoint;
  return { kind: 'beforeCommand', checkpointId: c.id, commit: c.commit, label: c.label };
}

/** Ended turns are looked at this far back when a repository is first watched (a turn that ended just before). */
const FIRST_LOOK_MS = 10 * 60 * 1000;
/** The checkpoint ids already told, in the extension's global state (kept for those the store still lists). */
const SHOWN_KEY = 'agentVersions.checkpointNoticesShown';
const MAX_SHOWN = 1000;
const SLACK_MS = 60 * 1000;

/**
 * The end-of-turn notice (issue 34): when a turn ends (each repository's store changes fire onDidChange) and files
 * that were there before one of its destructive commands are gone or changed at its end, says so once per
 * checkpoint, with the button that restores to just before it. Remembered in the extension's global state, so a
 * reload does not repeat it; a repository's first look covers turns that ended in the last FIRST_LOOK_MS only (not a
 * history's worth of old turns at install), later looks the turns that ended since the previous one.
 */
export class CheckpointNotices implements vscode.Disposable {
  /** Per repository: turns that ended at or after `since` are looked at (moved on after each look). */
  private readonly watched = new Map<RepositoryController, { since: number; listener: vscode.Disposable }>();
  private readonly checking = new Map<RepositoryController, Promise<void>>();
  private readonly again = new Set<RepositoryController>();
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    registry: RepositoryRegistry,
    private readonly runner: RestoreRunner,
    private readonly state: vscode.Memento,
    private readonly log: EventLog,
  ) {
    this.disposables.push(registry.onDidOpen((c) => this.watch(c)));
    void registry.all().then((open) => open.forEach((c) => this.watch(c)));
  }

  private watch(controller: RepositoryController): void {
    if (this.watched.has(controller)) return;
    const listener = controller.onDidChange(() => void this.check(controller));
    this.watched.set(controller, { since: Date.now() - FIRST_LOOK_MS, listener });
    void this.check(controller);
  }

  /** One look at a time per repository; changes during a look make one more look after it. */
  check(controller: RepositoryController): Promise<void> {
    if (this.checking.has(controller)) {
      this.again.add(controller);
      return this.checking.get(controller)!;
    }
    const look = this.look(controller).finally(() => {
      this.checking.delete(controller);
      if (this.again.delete(controller)) void this.check(controller);
    });
    this.checking.set(controller, look);
    return look;
  }

  private async look(controller: RepositoryController): Promise<void> {
    const watched = this.watched.get(controller);
    if (!watched) return;
    const started = Date.now();
    let steps: CheckpointStep[];
    try {
      steps = await controller.history.stepsOfEndedTurns(watched.since);
    } catch (error) {
      this.log.warn('checkpoint.notice-failed', { reason: error instanceof AvhError ? error.reason : 'unexpected' });
      return;
    }
    // Turns that ended before this look are told now or never (nothing of theirs was gone); a minute of slack covers
    // an end recorded just before the read that reached us after it (the shown set keeps each told once).
    watched.since = Math.max(watched.since, started - SLACK_MS);
    const shown = new Set(this.state.get<string[]>(SHOWN_KEY, []));
    const fresh = steps.filter((s) => !shown.has(s.id) && s.files.length > 0);
    if (fresh.length === 0) return;
    await this.state.update(SHOWN_KEY, [...shown, ...fresh.map((s) => s.id)].slice(-MAX_SHOWN));
    for (const step of fresh) {
      this.log.info('checkpoint.notice', { checkpoint: step.id, files: step.files.length });
      void vscode.window.showWarningMessage(checkpointNoticeText(step), RESTORE_BEFORE_COMMAND).then(async (choice) => {
        if (choice !== RESTORE_BEFORE_COMMAND) return;
        let request: BeforeCommandRequest;
        try {
          request = await beforeCommandRequest(controller, step.id);
        } catch (error) {
          this.runner.reportFailure('beforeCommand', error);
          return;
        }
        await this.runner.perform(controller, request, RESTORE_BEFORE_COMMAND);
      });
    }
  }

  dispose(): void {
    for (const w of this.watched.values()) w.listener.dispose();
    this.watched.clear();
    for (const d of this.disposables) d.dispose();
  }
}
