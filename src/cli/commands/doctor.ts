import { GitRepository, resolveRepository } from '../../core/git/repository';
import { CONNECTABLE_AGENTS } from '../agents/registry';
import type { CommandContext, CommandOutput, CommandSpec } from '../command';
import { Check, CheckStatus } from '../doctor/check';
import { checkConversationRollback } from '../doctor/conversationCheck';
import { checkGit } from '../doctor/gitCheck';
import { checkHookLatency, checkHooks } from '../doctor/hookChecks';
import { checkLargeRepository } from '../doctor/largeRepositoryCheck';
import { checkRepositoryState, unresolvedRepositoryCheck } from '../doctor/repositoryChecks';
import { EXIT } from '../exitCodes';

/**
 * `agent-versions doctor`: one screen that says whether this can work here. Each check is ok, warning (works,
 * but something is worth knowing) or problem (something will fail), with the fix. Exit 0 without problems.
 */

export const spec: CommandSpec = {
  name: 'doctor',
  args: [],
  options: [],
  summary: 'check whether Agent Version History can work here',
  description:
    'Checks git (path and version), the repository, the git identity, the state file, recovery, a large ' +
    'repository’s untracked cache (above 100,000 files), the agents’ hooks, ' +
    'whether each agent’s chat can be continued from before a turn with the version on PATH (chat fork), ' +
    'and times one no-op hook run. Each line is ok, warning or problem, with the fix. Exit 0 when there is no ' +
    'problem (warnings allowed), 1 otherwise.',
  example: 'agent-versions doctor',
  json:
    '{"ok": boolean, "checks": [{"id": string, "status": "ok"|"warning"|"problem", "summary": string, ' +
    '"fix"?: string, "facts": object}]}',
};

export async function run(c: CommandContext): Promise<CommandOutput> {
  const report = await runDoctor(c.folder);
  return { json: report, text: doctorText(report), exitCode: report.ok ? EXIT.ok : EXIT.failed };
}

export interface DoctorReport {
  ok: boolean;
  folder: string;
  checks: Check[];
}

/**
 * Runs every check for `folder`. Opens the repository's state like every command does (settling a crashed restore);
 * otherwise read-only.
 */
export async function runDoctor(folder: string): Promise<DoctorReport> {
  const checks: Check[] = [];
  const gitCheck = await checkGit(folder);
  checks.push(gitCheck);
  let repo: GitRepository | null = null;
  if (gitCheck.status !== 'problem' || gitCheck.facts.path) {
    try {
      repo = await resolveRepository(folder);
    } catch (error) {
      checks.push(unresolvedRepositoryCheck(folder, error));
    }
  }
  if (repo) checks.push(...(await checkRepositoryState(repo)));
  const large = repo ? checkLargeRepository(repo) : null;
  if (large) checks.push(large);
  for (const agent of CONNECTABLE_AGENTS) checks.push(await checkHooks(agent, folder));
  for (const agent of CONNECTABLE_AGENTS) checks.push(checkConversationRollback(agent, process.env));
  if (repo) checks.push(await checkHookLatency(repo));
  return { ok: checks.every((c) => c.status !== 'problem'), folder, checks };
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
