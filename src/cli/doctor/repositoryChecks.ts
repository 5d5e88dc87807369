import * as path from 'node:path';
import { commitIdentity, stateFileFacts } from '../../core/diagnostics';
import { isAvhError, safeMessage } from '../../core/errors';
import type { GitRepository } from '../../core/git/repository';
import { assessHealth, RecoveryAssessment, StatusReport, VersionHistory } from '../../core/versionHistory';
import { terminalSafe } from '../output';
import { Check, ok, problem, warning } from './check';

/**
 * The repository check when `folder` resolved to no repository: the cause git gave, and the fix for that cause
 * (`git init` only for a folder that is in no repository; a repository owned by another user is named as such,
 * with safe.directory: issue 25).
 */
export function unresolvedRepositoryCheck(folder: string, error: unknown): Check {
  if (isAvhError(error, 'repository-not-trusted')) {
    const root = typeof error.details.file === 'string' ? error.details.file : folder;
    return problem(
      'repository',
      `${terminalSafe(root)} is owned by another user, so git refuses to work in it (safe.directory).`,
      `If you trust it: git config --global --add safe.directory '${terminalSafe(root).replace(/'/g, "'\\''")}'` +
        ', then run doctor again.',
      { reason: error.reason },
    );
  }
  return problem(
    'repository',
    isAvhError(error, 'not-a-repository') ? `${folder} is not in a git repository.` : safeMessage(error),
    isAvhError(error, 'not-a-repository')
      ? 'Run `git init` in the project folder (or, in VS Code, choose Enable Version History), then run doctor again.'
      : 'Fix the cause named above, then run doctor again.',
    isAvhError(error) ? { reason: error.reason } : {},
  );
}

/** Repository verdict, identity, state file and recovery: from one open of the state and one status report. */
export async function checkRepositoryState(repo: GitRepository): Promise<Check[]> {
  let history: VersionHistory;
  try {
    history = await VersionHistory.openRepository(repo, { leaseWaitMs: 3000 });
  } catch (error) {
    return [
      problem(
        'state',
        `The state in ${repo.stateDir} could not be opened: ${safeMessage(error)}`,
        'Close other windows or agents using this repository and run doctor again; if it persists, run with --verbose.',
      ),
    ];
  }
  try {
    const status = await history.status();
    return [
      repositoryCheck(status),
      await identityCheck(repo),
      stateCheck(
        repo,
        status,
        history.notices.map((n) => n.message),
      ),
      recoveryCheck(status),
    ];
  } finally {
    await history.close();
  }
}

function repositoryCheck(status: StatusReport): Check {
  // The one place doctor turns repository health into a verdict.
  const verdict: RecoveryAssessment = assessHealth(status.health);
  const facts = {
    root: status.root,
    verdict: verdict.kind,
    ...(verdict.kind === 'blocked' ? { blocker: verdict.blocker } : {}),
  };
  switch (verdict.kind) {
    case 'healthy':
      return ok(
        'repository',
        `${status.root}: clean, on ${terminalSafe(verdict.branch)} at ${verdict.head.slice(0, 10)}`,
        facts,
      );
    case 'dirty': {
      const c = verdict.counts;
      return ok(
        'repository',
        `${status.root}: on ${terminalSafe(verdict.branch)} at ${verdict.head.slice(0, 10)}, ` +
          `with uncommitted changes (${c.staged} staged, ${c.unstaged} modified, ${c.untracked} untracked)`,
        facts,
      );
    }
    case 'blocked':
      return problem(
        'repository',
        `${status.root}: turns and restores are blocked (${verdict.blocker}).`,
        verdict.message,
        facts,
      );
  }
}

async function identityCheck(repo: GitRepository): Promise<Check> {
  const identity = await commitIdentity(repo);
  if (identity === 'configured')
    return ok('identity', 'git identity configured: versions are recorded under your name', { identity });
  return warning(
    'identity',
    'No git identity is configured: versions are recorded as "Agent Version History <agent-versions@localhost>".',
    'git config --global user.name "Your Name" && git config --global user.email "you@example.com"',
    { identity },
  );
}

function stateCheck(repo: GitRepository, status: StatusReport, notices: readonly string[]): Check {
  const files = stateFileFacts(repo);
  const facts = { ...files, turns: status.counts.turns, runningTurns: status.counts.runningTurns };
  const summary =
    `${repo.stateDir}: state ${bytes(files.snapshotBytes)}, journal ${bytes(files.journalBytes)}, ` +
    `${status.counts.turns} turn(s), ${status.counts.runningTurns} running`;
  if (notices.length > 0)
    return warning(
      'state',
      `${summary}. ${notices.join(' ')}`,
      'Nothing to do: the rebuilt state holds the turns found in commit trailers; prompts of older turns are gone.',
      facts,
    );
  if (files.quarantined.length > 0) {
    return warning(
      'state',
      `${summary}; ${files.quarantined.length} unreadable earlier state file(s) were moved aside.`,
      `They are kept for inspection; delete ${path.join(repo.stateDir, `${files.quarantined[0]}`)} and the like ` +
        'when you no longer need them.',
      facts,
    );
  }
  return ok('state', summary, facts);
}

function recoveryCheck(status: StatusReport): Check {
  const facts = { recovery: status.recovery, operation: status.operation };
  if (status.recovery) {
    return problem(
      'recovery',
      'Recovery is required: an earlier restore could not be verified ' +
        `(last phase ${status.recovery.lastPhase ?? 'unknown'}). ` +
        'Undo, redo, restore and new turns wait until it is settled.',
      'Run `agent-versions recover check`, then `agent-versions recover accept` ' +
        '(or `recover save-and-accept` if you have uncommitted changes).',
      facts,
    );
  }
  if (status.operation) {
    return warning(
      'recovery',
      `A ${status.operation.kind} is in progress (phase ${status.operation.phase}).`,
      'Wait for it to finish, then run doctor again.',
      facts,
    );
  }
  return ok('recovery', 'not required', facts);
}

function bytes(n: number | null): string {
  if (n === null) return 'not created yet';
  return n < 1024 ? `${n} B` : n < 1024 * 1024 ? `${(n / 1024).toFixed(1)} KiB` : `${(n / 1024 / 1024).toFixed(1)} MiB`;
}
