import { RECOVERY_SUBJECT } from '../../core/domain/promptSummary';
import {
  describeAge,
  RecoveryAssessment,
  RecoveryBlockedError,
  RecoverySettlement,
  type VersionHistory,
} from '../../core/versionHistory';
import { CommandContext, CommandOutput, CommandSpec, withHistory } from '../command';
import { EXIT, UsageError } from '../exitCodes';

const RECOVER_ACTIONS = ['check', 'accept', 'save-and-accept', 'remove-stale-lock'] as const;

export const spec: CommandSpec = {
  name: 'recover',
  args: [{ name: 'action', choices: RECOVER_ACTIONS, what: 'recover action' }],
  options: [],
  summary: 'after an unverified restore: check, use the current version, or save changes and use it',
  description:
    'check: look at the repository (changes nothing). accept: continue from the current version (never changes ' +
    'git). save-and-accept: commit your current changes as [Recovery] and continue. remove-stale-lock: remove a ' +
    'Git lock file (index.lock, a branch lock) that an interrupted restore of ours left, only when no Git command ' +
    'of ours runs; it shows the lock’s age. Exit 3 while recovery stays required.',
  example: 'agent-versions recover check',
  json:
    '{"recovery": "required"|"not-required", "result"?: string, ' +
    '"assessment"?: {"kind": "healthy"|"dirty"|"blocked", ...}, "removed"?: [{"file": string, "ageMs": number}]}',
};

export function run(c: CommandContext): Promise<CommandOutput> {
  return withHistory(c, async (history) => {
    const r = await runRecoverCommand(history, c.args[0], c.values.json === true);
    return { json: r.json, text: r.text, exitCode: r.exitCode };
  });
}

export interface RecoverOutput {
  json: unknown;
  text: string;
  exitCode: number;
}

/**
 * `agent-versions recover check|accept|save-and-accept|remove-stale-lock`. Exit 0 when recovery is not (or no
 * longer) required, or `check` found the repository acceptable; 3 while recovery stays required (a blocker or a
 * dirty tree); other failures are thrown for the caller's error handling (exit 1). Both renderings are always
 * returned (the caller prints one of them, by --json), so the flag changes nothing here.
 */
export async function runRecoverCommand(history: VersionHistory, sub: string, _json: boolean): Promise<RecoverOutput> {
  switch (sub) {
    case 'check': {
      const [latch, assessment, stale] = await Promise.all([
        history.recoveryLatch(),
        history.checkRepository(),
        history.findStaleGitLocks(),
      ]);
      const payload = {
        recovery: latch ? 'required' : 'not-required',
        ...(latch ? { operationId: latch.operationId, lastPhase: latch.lastPhase } : {}),
        assessment,
        ...(stale.length > 0
          ? { staleLocks: stale.map(({ file, ageMs }) => ({ file, ageMs: Math.round(ageMs) })) }
          : {}),
      };
      const hint = stale
        .map(
          (lock) =>
            `\n.git/${lock.file} was left ${describeAge(lock.ageMs)} ago by an interrupted restore: ` +
            'run `agent-versions recover remove-stale-lock` to remove it.',
        )
        .join('');
      if (!latch) return { json: payload, text: `Recovery is not required.${hint}`, exitCode: EXIT.ok };
      return {
        json: payload,
        text: describeAssessment(assessment) + hint,
        exitCode: assessment.kind === 'healthy' ? EXIT.ok : EXIT.recoveryRequired,
      };
    }
    case 'accept':
      return settlementOutput(await history.acceptCurrentVersion());
    case 'save-and-accept':
      try {
        return settlementOutput(await history.saveAndAcceptCurrentVersion());
      } catch (error) {
        if (!(error instanceof RecoveryBlockedError)) throw error;
        return settlementOutput({ result: 'rejected', assessment: error.assessment });
      }
    case 'remove-stale-lock': {
      const removed = await history.removeStaleGitLocks();
      const latch = await history.recoveryLatch();
      const next = latch ? ' Recovery is still required: run `agent-versions recover check`.' : '';
      return {
        json: {
          recovery: latch ? 'required' : 'not-required',
          result: 'removed',
          removed: removed.map(({ file, ageMs }) => ({ file, ageMs: Math.round(ageMs) })),
        },
        text:
          removed
            .map(
              (lock) =>
                `Removed the stale lock .git/${lock.file} ` +
                `(left ${describeAge(lock.ageMs)} ago by an interrupted restore).`,
            )
            .join('\n') + next,
        exitCode: latch ? EXIT.recoveryRequired : EXIT.ok,
      };
    }
    default: // the command line admits only RECOVER_ACTIONS; this guards direct callers
      throw new UsageError(`recover needs one of: ${RECOVER_ACTIONS.join(', ')}`);
  }
}

function settlementOutput(settlement: RecoverySettlement): RecoverOutput {
  switch (settlement.result) {
    case 'not-required':
      return {
        json: { recovery: 'not-required', result: 'not-required' },
        text: 'Recovery is not required.',
        exitCode: EXIT.ok,
      };
    case 'accepted': {
      const where = `${settlement.branch} at ${settlement.head.slice(0, 12)}`;
      const text = settlement.savedCommit
        ? `Current changes saved — Your changes were saved as ${RECOVERY_SUBJECT} ` +
          `(${settlement.savedCommit.slice(0, 12)}). Version History is ready (${where}).`
        : `Version History is ready — Continuing from the current code version (${where}).`;
      return { json: { recovery: 'not-required', ...settlement }, text, exitCode: EXIT.ok };
    }
    case 'rejected':
      return {
        json: { recovery: 'required', result: 'rejected', assessment: settlement.assessment },
        text: describeAssessment(settlement.assessment),
        exitCode: EXIT.recoveryRequired,
      };
    case 'superseded':
      return {
        json: { recovery: 'required', result: 'superseded' },
        text: 'A newer restore needs attention. Run `agent-versions recover check` again.',
        exitCode: EXIT.recoveryRequired,
      };
  }
}

/** What the assessment means for someone at a terminal: the state, then the next command. */
function describeAssessment(assessment: RecoveryAssessment): string {
  switch (assessment.kind) {
    case 'healthy':
      return (
        `Recovery is required. The repository is clean on ${assessment.branch} at ${assessment.head.slice(0, 12)}: ` +
        'run `agent-versions recover accept` to continue from its current version.'
      );
    case 'dirty': {
      const c = assessment.counts;
      return (
        `Your current changes need to be saved (${c.staged} staged, ${c.unstaged} modified, ` +
        `${c.untracked} untracked). ` +
        'Run `agent-versions recover save-and-accept` to save them as the current version and continue using ' +
        'Version History.'
      );
    }
    case 'blocked':
      return `Version History is unavailable — ${assessment.message}`;
  }
}
