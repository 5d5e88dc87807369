import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { StoredTurnAnchor } from '../../core/chats/turnAnchors';
import { CliError, EXIT } from '../exitCodes';

/**
 * One agent's own way to continue a conversation from before a turn (issue 32, docs/design/conversation-rollback.md):
 * a fork of the agent's session that ends just before the turn's prompt, made and read back through the agent's own
 * mechanism. Listed in registry.ts; an agent that is not listed has none, and says so.
 */
export interface ConversationMechanism {
  /** The agent's name as turns record it ('claude-code'). */
  agent: string;
  displayName: string;
  /** The agent's command, as the user runs it (looked up on PATH). */
  command: string;
  /** The agent version this mechanism was verified with (scripts/agents/setup.sh pins it). */
  verifiedVersion: string;
  /** The version `<command> --version` reports, or null when that is not this agent's answer. */
  versionOf(versionLine: string): string | null;
  /** Whether the mechanism works with this version (the fork is read back either way). */
  supports(version: string): boolean;
  /**
   * What the mechanism needs besides the agent, installed by the user (Claude Code: the Agent SDK), for the agent's
   * command at `agentFile`: checked by `chat fork` (a refusal when not met) and `doctor`.
   */
  prerequisite?(agentFile: string, env: NodeJS.ProcessEnv): Prerequisite;
  /** What to do about a turn whose anchor is unknown, when the agent's setup can be the cause (opencode's plugin). */
  unknownAnchor?: string;
  /**
   * Forks the conversation just before the anchored turn; throws a CliError (nothing left behind) when it cannot.
   * `cwd`: the repository's folder, where the agent runs.
   */
  fork(anchor: StoredTurnAnchor, env: NodeJS.ProcessEnv, cwd: string): Promise<ConversationFork>;
}

/** What a mechanism needs besides the agent: met (`summary`: what was found), or the refusal and its fix. */
export type Prerequisite =
  | { met: true; summary: string; facts: Record<string, unknown> }
  | { met: false; message: string; fix: string; facts: Record<string, unknown> };

export interface ConversationFork {
  /** The agent's id of the new conversation. */
  forkId: string;
  /** The agent's id of the last message the fork holds (the anchor), or null when the agent names none. */
  anchorId: string | null;
  /** The command that resumes the fork, and the folder it must run in. */
  resume: { argv: string[]; cwd: string };
}

/** Where `command` is on PATH, or null. */
export function onPath(command: string, env: NodeJS.ProcessEnv): string | null {
  for (const dir of (env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const file = path.join(dir, command);
    try {
      fs.accessSync(file, fs.constants.X_OK);
      if (fs.statSync(file).isFile()) return file;
    } catch {
      // not here
    }
  }
  return null;
}

export interface InstalledAgent {
  /** The agent's command on PATH, or null. */
  file: string | null;
  /** Its version, or null (not installed, or it did not answer as this agent). */
  version: string | null;
}

/** The agent's command on PATH and the version it reports (`--version`, 10 s at most). */
export function installedAgent(mechanism: ConversationMechanism, env: NodeJS.ProcessEnv): InstalledAgent {
  const file = onPath(mechanism.command, env);
  if (!file) return { file: null, version: null };
  const r = spawnSync(file, ['--version'], { env, encoding: 'utf8', timeout: 10_000 });
  const line = (r.stdout ?? '').split('\n')[0].trim();
  return { file, version: r.status === 0 ? mechanism.versionOf(line) : null };
}

/** The closing sentence of every refusal: the fork makes nothing unless it is verified. */
export const NOTHING_CREATED = 'Nothing was created.';

export function refusal(message: string, exitCode: number = EXIT.failed): CliError {
  return new CliError(`${message} ${NOTHING_CREATED}`, exitCode);
}

/** A command line as a person types it (each word quoted only when it must be). */
export function shellLine(argv: readonly string[]): string {
  return argv.map((a) => (/^[A-Za-z0-9_./:@=+-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`)).join(' ');
}
