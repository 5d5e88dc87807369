import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import { performance } from 'node:perf_hooks';
import { parse as parseToml } from 'smol-toml';
import { safeMessage } from '../../core/errors';
import type { GitRepository } from '../../core/git/repository';
import { projectRootOf, settingsFiles } from '../agentConnection';
import type { ConnectableAgent, HookEntries, OurEntry, SettingsScope } from '../agents/agent';
import { claudeCode } from '../agents/claudeCode';
import { scopesOf } from '../agents/registry';
import { ourEntries, planConnect, readSettings, settingsEvents } from '../agentSettings';
import { CliError } from '../exitCodes';
import {
  cliEntryFile,
  currentCommandsOf,
  currentFormOf,
  hookCommandGuards,
  hookCommandInits,
  hookProcessEnv,
  missingFilesOf,
  runsThisInstallation,
} from '../installation';
import { Check, ok, problem, warning } from './check';

/** A no-op hook run slower than this is worth a warning: the agent waits for it on every prompt. */
const SLOW_HOOK_MS = 1000;
const HOOK_RUN_TIMEOUT_MS = 30_000;

interface ScopeEntries {
  scope: SettingsScope;
  file: string;
  entries: HookEntries;
  ours: OurEntry[];
}

/** A TOML file as a plain object (for an agent's review check: Codex's config.toml); null when it is not there. */
function readToml(file: string): Record<string, unknown> | null {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
  return parseToml(text) as Record<string, unknown>;
}

/**
 * Whether the agent is connected once, for every event, by this installation in its current form — and, where the
 * agent keeps its own say over hooks (Codex's review, a folder's trust), whether it will run them.
 */
export async function checkHooks(
  agent: ConnectableAgent,
  folder: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<Check> {
  const id = `hooks:${agent.name}`;
  const name = agent.settings.displayName;
  const connected: ScopeEntries[] = [];
  for (const { scope, file } of await settingsFiles(agent, folder, env)) {
    let ours: OurEntry[];
    try {
      ours = ourEntries(file, readSettings(file), agent);
    } catch (error) {
      return problem(
        id,
        `${name}: ${error instanceof CliError ? error.message : safeMessage(error)}`,
        `Fix ${file} by hand, then run doctor again.`,
        { file },
      );
    }
    const entries: HookEntries = new Map();
    for (const e of ours) entries.set(e.event, [...(entries.get(e.event) ?? []), e.command]);
    if (entries.size > 0) connected.push({ scope, file, entries, ours });
  }
  const facts: Record<string, unknown> = {
    connected: connected.map((c) => ({ scope: c.scope, file: c.file, events: [...c.entries.keys()] })),
  };
  const local = scopesOf(agent).includes('local') ? '; --local: this project, only for you' : '';
  const connectFix = `agent-versions connect ${agent.name} (--user: every project${local})`;
  if (connected.length === 0) return warning(id, `${name}: not connected.`, connectFix, facts);
  const missing = connected.flatMap((c) =>
    [...c.entries.values()]
      .flat()
      .flatMap(missingFilesOf)
      .map((f) => ({ scope: c.scope, f })),
  );
  if (missing.length > 0) {
    return problem(
      id,
      `${name}: the hook command names a file that no longer exists (${missing[0].f}).`,
      `agent-versions connect ${agent.name} --${missing[0].scope}`,
      facts,
    );
  }
  if (connected.length > 1) {
    return warning(
      id,
      `${name}: connected in ${connected.length} settings files (${connected.map((c) => c.file).join(', ')}): ` +
        'every hook runs more than once.',
      `Keep one: agent-versions disconnect ${agent.name} --${connected[1].scope}`,
      facts,
    );
  }
  const [only] = connected;
  const reconnect = `agent-versions connect ${agent.name} --${only.scope}`;
  const absent = settingsEvents(agent).filter((e) => !only.entries.has(e));
  const stale = [...only.entries.keys()].filter((e) => !agent.events.has(e));
  if (absent.length > 0 || stale.length > 0) {
    const parts = [
      absent.length > 0 ? `not for ${absent.join(', ')}` : '',
      stale.length > 0 ? `also for ${stale.join(', ')}, which ${name} does not send` : '',
    ].filter(Boolean);
    return warning(id, `${name}: connected in ${only.file}, but ${parts.join(', and ')}.`, reconnect, facts);
  }
  const commands = [...only.entries.values()].flat();
  if (commands.some((c) => !runsThisInstallation(c, agent.name))) {
    return warning(
      id,
      `${name}: connected in ${only.file}, to another agent-versions installation than this one.`,
      `To use this one: ${reconnect}`,
      facts,
    );
  }
  const wanted = planConnect(only.file, readSettings(only.file), agent, currentCommandsOf(commands, agent.name));
  const olderCommands = commands.some((c) => c !== currentFormOf(c, agent.name));
  if (olderCommands || wanted.after !== null) {
    const again =
      `${reconnect}${commands.some(hookCommandInits) ? ' --init' : ''}` +
      `${commands.some(hookCommandGuards) ? ' --guard-destructive' : ''}`;
    // The commands are current but the file we wrote is not (opencode's plugin): the format says what it lacks.
    const outdated = olderCommands ? undefined : agent.settings.format?.outdated;
    if (outdated)
      return warning(id, `${name}: connected in ${only.file}, but ${outdated}`, `To write the current one: ${again}`, {
        ...facts,
        outdated: true,
      });
    return warning(
      id,
      `${name}: connected in ${only.file} with an older form of this installation's hook entries.`,
      `To write the current one (it starts faster, or runs longer where the agent cuts hooks short): ${again}`,
      facts,
    );
  }
  const review = await agent.settings.review?.({
    scope: only.scope,
    file: only.file,
    entries: only.ours,
    projectRoot: await projectRootOf(folder),
    home: os.homedir(),
    env,
    readToml,
  });
  if (review) {
    Object.assign(facts, review.facts);
    if (review.status !== 'ok') {
      const summary = `${name}: connected in ${only.file}, but ${review.summary}`;
      return review.status === 'problem'
        ? problem(id, summary, review.fix ?? reconnect, facts)
        : warning(id, summary, review.fix ?? reconnect, facts);
    }
    return ok(id, `${name}: connected in ${only.file}; ${review.summary}`, facts);
  }
  return ok(id, `${name}: connected in ${only.file}`, facts);
}

/**
 * Times one real hook process of this installation: a Claude Code Stop of a chat that has no running turn opens the
 * repository and its state like every turn event, finds nothing to end and changes nothing (an event the hook does
 * not act on would open nothing, so it would not show what each prompt waits for).
 */
export async function checkHookLatency(repo: GitRepository): Promise<Check> {
  const event = JSON.stringify({ hook_event_name: 'Stop', session_id: 'agent-versions-doctor', cwd: repo.root });
  const started = performance.now();
  const code = await new Promise<number | null>((resolve) => {
    const child = spawn(process.execPath, [cliEntryFile(), 'hook', claudeCode.name], {
      cwd: repo.root,
      // Claude Code's own event, wherever doctor runs (Copilot CLI's hook marker would have it ignored).
      env: { ...hookProcessEnv(process.env), COPILOT_CLI: '' },
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
