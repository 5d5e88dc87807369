import { spawn } from 'node:child_process';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import {
  commitIdentity,
  gitExecutableFor,
  gitVersion,
  MIN_GIT_VERSION,
  stateFileFacts,
  TESTED_GIT_VERSION,
  versionAtLeast,
} from '../core/diagnostics';
import { isAvhError, safeMessage } from '../core/errors';
import { GitRepository, resolveRepository } from '../core/git/repository';
import { assessHealth, RecoveryAssessment } from '../core/recovery/recoveryActions';
import { StatusReport, VersionHistory } from '../core/versionHistory';
import { ADAPTERS, AgentAdapter, HookEntries, ourHookEntries, readSettings, SettingsScope } from './agentSettings';
import { AGENTS } from './commandLine';
import { settingsFiles } from './connectCommand';
import { CliError } from './exitCodes';
import {
  cliEntryFile,
  currentFormOf,
  hookCommandInits,
  hookProcessEnv,
  missingFilesOf,
  runsThisInstallation,
} from './installation';
import { terminalSafe } from './output';

/**
 * `agent-versions doctor`: one screen that says whether this can work here. Each check is ok, warning (works,
 * but something is worth knowing) or problem (something will fail), with the fix. Exit 0 without problems.
 */

export type CheckStatus = 'ok' | 'warning' | 'problem';

export interface Check {
  id: string;
  status: CheckStatus;
  summary: string;
  fix?: string;
  facts: Record<string, unknown>;
}

export interface DoctorReport {
  ok: boolean;
  folder: string;
  checks: Check[];
}

/** A no-op hook run slower than this is worth a warning: the agent waits for it on every prompt. */
const SLOW_HOOK_MS = 1000;
const HOOK_RUN_TIMEOUT_MS = 30_000;

const ok = (id: string, summary: string, facts: Record<string, unknown> = {}): Check => ({
  id,
  status: 'ok',
  summary,
  facts,
});
const warning = (id: string, summary: string, fix: string, facts: Record<string, unknown> = {}): Check => ({
  id,
  status: 'warning',
  summary,
  fix,
  facts,
});
const problem = (id: string, summary: string, fix: string, facts: Record<string, unknown> = {}): Check => ({
  id,
  status: 'problem',
  summary,
  fix,
  facts,
});

const version = (v: readonly [number, number]) => v.join('.');

/** Runs every check for `folder`. Opens the repository's state like every command does (settling a crashed restore); otherwise read-only. */
export async function runDoctor(folder: string): Promise<DoctorReport> {
  const checks: Check[] = [];
  const gitCheck = await checkGit(folder);
  checks.push(gitCheck);
  let repo: GitRepository | null = null;
  if (gitCheck.status !== 'problem' || gitCheck.facts.path) {
    try {
      repo = await resolveRepository(folder);
    } catch (error) {
      checks.push(
        problem(
          'repository',
          isAvhError(error, 'not-a-repository') ? `${folder} is not in a git repository.` : safeMessage(error),
          'Run `git init` in the project folder (or, in VS Code, choose Enable Version History), then run doctor again.',
        ),
      );
    }
  }
  if (repo) checks.push(...(await checkRepositoryState(repo)));
  for (const agent of AGENTS) checks.push(await checkHooks(ADAPTERS[agent], folder));
  if (repo) checks.push(await checkHookLatency(repo));
  return { ok: checks.every((c) => c.status !== 'problem'), folder, checks };
}

async function checkGit(folder: string): Promise<Check> {
  const found = gitExecutableFor(folder);
  if (!('path' in found))
    return problem(
      'git',
      found.problem,
      `Install git ${version(TESTED_GIT_VERSION)} or newer and make sure it is on PATH (outside this repository).`,
      { path: null },
    );
  const gitPath = found.path;
  const v = await gitVersion(path.resolve(folder));
  const facts = {
    path: gitPath,
    version: v?.text ?? null,
    minimum: version(MIN_GIT_VERSION),
    tested: version(TESTED_GIT_VERSION),
  };
  if (!v) return problem('git', `${gitPath} did not report a version.`, 'Reinstall git, then run doctor again.', facts);
  if (!versionAtLeast(v, MIN_GIT_VERSION)) {
    return problem(
      'git',
      `git ${v.text} at ${gitPath} is older than ${version(MIN_GIT_VERSION)}: it cannot make the saves of your work durable (core.fsync).`,
      `Install git ${version(TESTED_GIT_VERSION)} or newer.`,
      facts,
    );
  }
  if (!versionAtLeast(v, TESTED_GIT_VERSION)) {
    return warning(
      'git',
      `git ${v.text} at ${gitPath} is older than ${version(TESTED_GIT_VERSION)}, the oldest version tested.`,
      `Install git ${version(TESTED_GIT_VERSION)} or newer.`,
      facts,
    );
  }
  return ok('git', `git ${v.text} at ${gitPath}`, facts);
}

/** Repository verdict, identity, state file and recovery: from one open of the state and one status report. */
async function checkRepositoryState(repo: GitRepository): Promise<Check[]> {
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
        `${status.root}: on ${terminalSafe(verdict.branch)} at ${verdict.head.slice(0, 10)}, with uncommitted changes (${c.staged} staged, ${c.unstaged} modified, ${c.untracked} untracked)`,
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
  const summary = `${repo.stateDir}: state ${bytes(files.snapshotBytes)}, journal ${bytes(files.journalBytes)}, ${status.counts.turns} turn(s), ${status.counts.runningTurns} running`;
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
      `They are kept for inspection; delete ${path.join(repo.stateDir, `${files.quarantined[0]}`)} and the like when you no longer need them.`,
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
      `Recovery is required: an earlier restore could not be verified (last phase ${status.recovery.lastPhase ?? 'unknown'}). Undo, redo, restore and new turns wait until it is settled.`,
      'Run `agent-versions recover check`, then `agent-versions recover accept` (or `recover save-and-accept` if you have uncommitted changes).',
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

interface ScopeEntries {
  scope: SettingsScope;
  file: string;
  entries: HookEntries;
}

async function checkHooks(adapter: AgentAdapter, folder: string): Promise<Check> {
  const id = `hooks:${adapter.agent}`;
  const connected: ScopeEntries[] = [];
  for (const { scope, file } of await settingsFiles(adapter, folder)) {
    let entries: HookEntries;
    try {
      entries = ourHookEntries(file, readSettings(file), adapter);
    } catch (error) {
      return problem(
        id,
        `${adapter.displayName}: ${error instanceof CliError ? error.message : safeMessage(error)}`,
        `Fix ${file} by hand, then run doctor again.`,
        { file },
      );
    }
    if (entries.size > 0) connected.push({ scope, file, entries });
  }
  const facts = { connected: connected.map((c) => ({ scope: c.scope, file: c.file, events: [...c.entries.keys()] })) };
  const connectFix = `agent-versions connect ${adapter.agent} (--user: every project${adapter.scopes.includes('local') ? '; --local: this project, only for you' : ''})`;
  if (connected.length === 0) return warning(id, `${adapter.displayName}: not connected.`, connectFix, facts);
  const missing = connected.flatMap((c) =>
    [...c.entries.values()]
      .flat()
      .flatMap(missingFilesOf)
      .map((f) => ({ scope: c.scope, f })),
  );
  if (missing.length > 0) {
    return problem(
      id,
      `${adapter.displayName}: the hook command names a file that no longer exists (${missing[0].f}).`,
      `agent-versions connect ${adapter.agent} --${missing[0].scope}`,
      facts,
    );
  }
  if (connected.length > 1) {
    return warning(
      id,
      `${adapter.displayName}: connected in ${connected.length} settings files (${connected.map((c) => c.file).join(', ')}): every hook runs more than once.`,
      `Keep one: agent-versions disconnect ${adapter.agent} --${connected[1].scope}`,
      facts,
    );
  }
  const [only] = connected;
  const absent = adapter.events.filter((e) => !only.entries.has(e));
  if (absent.length > 0) {
    return warning(
      id,
      `${adapter.displayName}: connected in ${only.file}, but not for ${absent.join(', ')}.`,
      `agent-versions connect ${adapter.agent} --${only.scope}`,
      facts,
    );
  }
  const commands = [...only.entries.values()].flat();
  if (commands.some((c) => !runsThisInstallation(c, adapter.agent))) {
    return warning(
      id,
      `${adapter.displayName}: connected in ${only.file}, to another agent-versions installation than this one.`,
      `To use this one: agent-versions connect ${adapter.agent} --${only.scope}`,
      facts,
    );
  }
  if (commands.some((c) => c !== currentFormOf(c, adapter.agent))) {
    return warning(
      id,
      `${adapter.displayName}: connected in ${only.file} with an older form of this installation's hook command.`,
      `To write the current one (it starts faster on every event): agent-versions connect ${adapter.agent} --${only.scope}${commands.some(hookCommandInits) ? ' --init' : ''}`,
      facts,
    );
  }
  return ok(id, `${adapter.displayName}: connected in ${only.file}`, facts);
}

/**
 * Times one real hook process of this installation: a Stop of a chat that has no running turn opens the repository
 * and its state like every turn event, finds nothing to end and changes nothing (an event the hook does not act
 * on would open nothing, so it would not show what each prompt waits for).
 */
async function checkHookLatency(repo: GitRepository): Promise<Check> {
  const event = JSON.stringify({ hook_event_name: 'Stop', session_id: 'agent-versions-doctor', cwd: repo.root });
  const started = performance.now();
  const code = await new Promise<number | null>((resolve) => {
    const child = spawn(process.execPath, [cliEntryFile(), 'hook', AGENTS[0]], {
      cwd: repo.root,
      env: hookProcessEnv(process.env),
      stdio: ['pipe', 'ignore', 'ignore'],
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), HOOK_RUN_TIMEOUT_MS);
    child.on('error', () => {
      clearTimeout(timer);
      resolve(null);
    });
    child.on('close', (exit) => {
      clearTimeout(timer);
      resolve(exit);
    });
    child.stdin.on('error', () => {
      /* the exit code tells */
    });
    child.stdin.end(event);
  });
  const ms = Math.round(performance.now() - started);
  const facts = { ms, exitCode: code };
  if (code !== 0)
    return problem(
      'hook-latency',
      `A no-op hook run failed (exit ${code ?? 'none'}) after ${ms} ms.`,
      'Run `agent-versions --verbose status` here to see why the CLI cannot open this repository.',
      facts,
    );
  if (ms >= SLOW_HOOK_MS) {
    return warning(
      'hook-latency',
      `A no-op hook run took ${ms} ms; the agent waits this long on every prompt.`,
      'Check for a slow disk or antivirus scanning the repository; bench/RESULTS.md shows the expected costs.',
      facts,
    );
  }
  return ok('hook-latency', `a no-op hook run took ${ms} ms`, facts);
}

function bytes(n: number | null): string {
  if (n === null) return 'not created yet';
  return n < 1024 ? `${n} B` : n < 1024 * 1024 ? `${(n / 1024).toFixed(1)} KiB` : `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

/** The report for people: one line per check, the fix indented under warnings and problems, a tally. */
export function doctorText(report: DoctorReport): string {
  const width = Math.max(...report.checks.map((c) => c.id.length));
  const lines = report.checks.flatMap((c) => [
    `${c.status.padEnd(7)}  ${c.id.padEnd(width)}  ${c.summary}`,
    ...(c.fix ? [`${' '.repeat(9 + width + 2)}fix: ${c.fix}`] : []),
  ]);
  const count = (s: CheckStatus) => report.checks.filter((c) => c.status === s).length;
  const problems = count('problem');
  const warnings = count('warning');
  lines.push(
    '',
    problems === 0 && warnings === 0 ? 'Everything looks good.' : `${problems} problem(s), ${warnings} warning(s).`,
  );
  return lines.join('\n');
}
