import * as path from 'node:path';
import * as vscode from 'vscode';
import { Actor, createActor, SnapshotFrom, waitFor } from 'xstate';
import { safeMessage } from '../core/errors';
import type { EventLog } from '../core/log';
import { RECOVERY_SUBJECT } from '../core/domain/promptSummary';
import type { RepositoryController } from './repositoryController';
import { isRecoveryPending, recoveryMachine, RecoveryStateValue } from '../core/recovery/recoveryMachine';
import { describeAge, StaleGitLock } from '../core/versionHistory';

type RecoverySnapshot = SnapshotFrom<typeof recoveryMachine>;

/** Button labels and notice copy (docs/product-contract.md §6, with the product's name). */
export const RECOVERY_COPY = {
  useCurrentVersion: 'Use current version',
  saveAndUse: 'Save changes & use current version',
  checkAgain: 'Check again',
  tryAgain: 'Try again',
  required:
    'Version restore needs attention — Agent Version History could not verify an earlier restore. ' +
    'If this project is clean, you can continue from its current version.',
  checking: 'Checking the current repository…',
  saving: 'Saving the current version…',
  dirty:
    'Your current changes need to be saved — Agent Version History found changes that are not part of a saved ' +
    'version. Save them as the current version to continue using Version History.',
  blocked: (message: string) => `Version History is unavailable — ${message}`,
  failed: (message: string) => `Version History could not continue — ${message}`,
  ready: 'Version History is ready — Continuing from the current code version.',
  removeStaleLock: 'Remove Stale Lock',
  staleLocks: (locks: readonly StaleGitLock[]) =>
    locks
      .map(
        (l) =>
          `.git/${l.file} was left ${describeAge(l.ageMs)} ago by an interrupted restore of Agent Version History, ` +
          'and none of its Git commands is running now.',
      )
      .join(' '),
  staleLocksRemoved: (n: number, next: string) => `Removed ${n === 1 ? 'the stale lock' : `${n} stale locks`}. ${next}`,
  saved: `Current changes saved — Your changes were saved as ${RECOVERY_SUBJECT}. Version History is ready.`,
} as const;

/** `blocked-stale-lock`: a blocked notice that offered Remove Stale Lock. */
export type NoticeKind = 'required' | 'dirty' | 'blocked' | 'blocked-stale-lock' | 'failed' | 'ready' | 'saved';

interface Notice {
  kind: NoticeKind;
  severity: 'info' | 'warning' | 'error';
  message: string;
  buttons?: string[];
  /** Git locks our crashed restore left (offered for removal with the notice). */
  staleLocks?: StaleGitLock[];
}

const TRANSIENT: readonly RecoveryStateValue[] = ['validating', 'saving'];

/**
 * Guided recovery for one repository in this window. The xstate actor holds the in-memory flow; the latch in
 * the store is the truth, re-read whenever the repository or its state changes (this window, another window,
 * the CLI). Notices follow authoritative states only; dismissing one changes nothing.
 */
export class RecoverySession implements vscode.Disposable {
  private readonly actor: Actor<typeof recoveryMachine>;
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChange = this.changed.event;
  private readonly disposables: vscode.Disposable[] = [];
  private previous: RecoveryStateValue = 'idle';
  /** The notice with a button that is still open (shown, or hidden in the notification center), if any. */
  private openNotice: NoticeKind | null = null;
  private noticeSeq = 0;
  /** Kinds of the notices shown, oldest first (content-free; read by the extension-host tests). */
  readonly shownNotices: NoticeKind[] = [];
  private disposed = false;

  constructor(
    readonly controller: RepositoryController,
    private readonly log: EventLog,
    private readonly prefix: () => string,
  ) {
    this.actor = createActor(recoveryMachine, { input: { repo: controller.history } });
    this.actor.subscribe((snapshot) => this.onSnapshot(snapshot));
    this.actor.start();
    this.disposables.push(controller.onDidChange(() => void this.refresh()));
  }

  get root(): string {
    return this.controller.root;
  }

  get name(): string {
    return path.basename(this.controller.root);
  }

  get state(): RecoveryStateValue {
    return this.actor.getSnapshot().value as RecoveryStateValue;
  }

  get snapshot(): RecoverySnapshot {
    return this.actor.getSnapshot();
  }

  /** Recovery is required (including while an action runs). */
  get pending(): boolean {
    return isRecoveryPending(this.state);
  }

  /** Save changes & use current version applies: the last authoritative assessment was a dirty tree. */
  get canSave(): boolean {
    return this.actor.getSnapshot().can({ type: 'SAVE' });
  }

  /** Re-reads the latch (the durable truth) and feeds it to the machine. */
  async refresh(): Promise<void> {
    if (this.disposed) return;
    try {
      const latch = await this.controller.history.recoveryLatch();
      if (!this.disposed) this.actor.send({ type: 'LATCH', generation: latch?.generation ?? null });
    } catch (error) {
      this.log.warn('recovery.latch-read-failed', { reason: error instanceof Error ? error.name : 'unknown' });
    }
  }

  /**
   * Use current version / Check again; resolves with the state the action settled in. Extra clicks join the running
   * action.
   */
  accept(): Promise<RecoveryStateValue> {
    return this.dispatch({ type: 'ACCEPT' });
  }

  save(): Promise<RecoveryStateValue> {
    return this.dispatch({ type: 'SAVE' });
  }

  retry(): Promise<RecoveryStateValue> {
    return this.dispatch({ type: 'RETRY' });
  }

  /** Shows the current recovery notice again (after it was dismissed), or the notification list if it is still open. */
  resurface(): void {
    if (!this.pending || TRANSIENT.includes(this.state)) return;
    if (this.openNotice) {
      void vscode.commands.executeCommand('notifications.showList');
      return;
    }
    this.showNotice(this.noticeFor(this.actor.getSnapshot()));
  }

  private async dispatch(event: { type: 'ACCEPT' | 'SAVE' | 'RETRY' }): Promise<RecoveryStateValue> {
    const snapshot = this.actor.getSnapshot();
    if (snapshot.can(event)) this.actor.send(event);
    else if (!TRANSIENT.includes(this.state)) {
      // A stale button (the state moved on): show what applies now instead of doing nothing.
      this.resurface();
      return this.state;
    }
    const settled = await waitFor(this.actor, (s) => !TRANSIENT.includes(s.value as RecoveryStateValue), {
      timeout: Infinity,
    });
    return settled.value as RecoveryStateValue;
  }

  private onSnapshot(snapshot: RecoverySnapshot): void {
    const state = snapshot.value as RecoveryStateValue;
    const previous = this.previous;
    this.previous = state;
    if (state === previous) {
      this.changed.fire();
      return;
    }
    this.log.info('recovery.state', { state });
    if (TRANSIENT.includes(state)) {
      this.openNotice = null; // its button was used, or it is superseded by the running action
      void vscode.window.withProgress(
        {
          location: vscode.ProgressLocation.Notification,
          title: this.prefix() + (state === 'validating' ? RECOVERY_COPY.checking : RECOVERY_COPY.saving),
        },
        () => waitFor(this.actor, (s) => s.value !== state, { timeout: Infinity }).catch(() => undefined),
      );
    } else if (state === 'accepted') {
      this.controller.notifyChanged();
      this.showNotice(this.noticeFor(snapshot));
    } else if (state !== 'idle') {
      this.showNotice(this.noticeFor(snapshot));
    }
    this.changed.fire();
  }

  private noticeFor(snapshot: RecoverySnapshot): Notice {
    const { context } = snapshot;
    switch (snapshot.value as RecoveryStateValue) {
      case 'dirty':
        return {
          kind: 'dirty',
          severity: 'warning',
          message: RECOVERY_COPY.dirty,
          buttons: [RECOVERY_COPY.saveAndUse],
        };
      case 'blocked': {
        const message =
          context.assessment?.kind === 'blocked'
            ? context.assessment.message
            : 'The repository cannot be used as it is.';
        return {
          kind: 'blocked',
          severity: 'warning',
          message: RECOVERY_COPY.blocked(message),
          buttons: [RECOVERY_COPY.checkAgain],
        };
      }
      case 'failed':
        return {
          kind: 'failed',
          severity: 'error',
          message: RECOVERY_COPY.failed(context.error?.message ?? 'Unexpected failure'),
          buttons: [RECOVERY_COPY.tryAgain],
        };
      case 'accepted':
        return context.settlement?.savedCommit
          ? { kind: 'saved', severity: 'info', message: RECOVERY_COPY.saved }
          : { kind: 'ready', severity: 'info', message: RECOVERY_COPY.ready };
      default:
        return {
          kind: 'required',
          severity: 'warning',
          message: RECOVERY_COPY.required,
          buttons: [RECOVERY_COPY.useCurrentVersion],
        };
    }
  }

  /**
   * Shows a notice; a blocked one first looks for git locks a crashed restore of ours left (read-only) and, when
   * there are some, says so with their age and offers Remove Stale Lock beside Check again.
   */
  private showNotice(notice: Notice): void {
    if (notice.kind !== 'blocked') return this.present(notice);
    void this.controller.history.findStaleGitLocks().then(
      (locks) =>
        this.present(
          locks.length === 0
            ? notice
            : {
                ...notice,
                message: `${notice.message} ${RECOVERY_COPY.staleLocks(locks)}`,
                buttons: [RECOVERY_COPY.removeStaleLock, ...(notice.buttons ?? [])],
                staleLocks: locks,
              },
        ),
      () => this.present(notice),
    );
  }

  private present(notice: Notice): void {
    if (this.disposed) return;
    this.shownNotices.push(notice.staleLocks ? 'blocked-stale-lock' : notice.kind);
    const seq = ++this.noticeSeq;
    const buttons = notice.buttons ?? [];
    if (buttons.length > 0) this.openNotice = notice.kind;
    const show =
      notice.severity === 'error'
        ? vscode.window.showErrorMessage
        : notice.severity === 'warning'
          ? vscode.window.showWarningMessage
          : vscode.window.showInformationMessage;
    const shown = show(this.prefix() + notice.message, ...buttons);
    void Promise.resolve(shown).then((choice) => {
      if (seq === this.noticeSeq && buttons.length > 0) this.openNotice = null;
      if (choice === undefined || this.disposed) return; // dismissed: recovery stays as it is
      if (choice === RECOVERY_COPY.removeStaleLock) void this.removeStaleLocks(notice.staleLocks ?? []);
      else if (choice === RECOVERY_COPY.saveAndUse) void this.save();
      else if (choice === RECOVERY_COPY.tryAgain) void this.retry();
      else void this.accept();
    });
  }

  /** Remove Stale Lock: removes exactly the locks the notice named (re-checked under the lease), then checks again. */
  async removeStaleLocks(locks: readonly StaleGitLock[]): Promise<RecoveryStateValue> {
    await removeShownStaleLocks(this.controller, locks, this.prefix(), 'Checking the repository again…');
    return this.accept();
  }

  dispose(): void {
    this.disposed = true;
    this.actor.stop();
    for (const d of this.disposables) d.dispose();
    this.changed.dispose();
  }
}

/** Removes exactly the stale git locks a message showed (re-checked under the lease) and says what happened. */
export async function removeShownStaleLocks(
  controller: RepositoryController,
  locks: readonly StaleGitLock[],
  prefix: string,
  next: string,
): Promise<void> {
  try {
    const removed = await controller.history.removeStaleGitLocks(locks.map((l) => l.file));
    void vscode.window.showInformationMessage(prefix + RECOVERY_COPY.staleLocksRemoved(removed.length, next));
  } catch (error) {
    void vscode.window.showErrorMessage(prefix + safeMessage(error));
  }
  controller.notifyChanged();
}
