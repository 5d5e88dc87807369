import * as path from 'node:path';
import { AvhError } from '../../core/errors';
import { agentNamed } from '../agents/registry';
import type { HookEvent } from './hookEvent';

// Reading a hook event and the result a hook reports, shared by the full path (runHook.ts) and the fast path
// (fastHook.ts).

/** A hook must never hold up the agent for long: it waits only briefly for another process's repository lease. */
export const HOOK_LEASE_WAIT_MS = 3000;

export interface HookResult {
  agent: string;
  event: string;
  /**
   * 'recorded': a tool event's written files were noted for its chat's running turn (toolWriteHook.ts).
   * 'checkpoint': a checkpoint was taken before the tool's destructive command (checkpointHook.ts).
   */
  action: 'began' | 'ended' | 'ignored' | 'recorded' | 'checkpoint';
  /**
   * Ignored because the folder has no git repository (and no --init), or because the event came from another
   * agent that records itself through its own hooks (Copilot CLI running Claude Code's project hooks).
   */
  reason?: 'no-repository' | 'another-agent' | 'checkpoint-failed';
  /** 'checkpoint': its id (`agent-versions undo --before-command <id>`) and what was recognised, content-free. */
  checkpointId?: string;
  command?: string;
  turnId?: string;
  outcome?: string;
  version?: string | null;
  cancelled?: string[];
  /**
   * 'recorded': how many files of the working tree the tool named, and whether it ran a shell command.
   * 'checkpoint': how many ignored files were kept beside the snapshot.
   */
  files?: number;
  shell?: boolean;
  /** The note the turn's agent was told (after an Undo, Redo or Restore changed files: core/chats/noteText.ts). */
  note?: string;
}

/** Reads the agent's payload into a HookEvent. Bad input throws an 'invalid-input' AvhError naming the problem. */
export async function parseHookInput(request: {
  /** A name the hook command admits (agents/registry.ts). */
  agent: string;
  readStdin: () => Promise<string>;
  payload?: string;
  /** The hook process's environment (default: this process's). */
  env?: NodeJS.ProcessEnv;
}): Promise<HookEvent> {
  const agent = agentNamed(request.agent);
  // Nothing at all on stdin: what a hook reads when its agent exited while starting it (Copilot CLI on Ctrl+C).
  const readStdin = async () => {
    const raw = await request.readStdin();
    if (raw.trim() === '')
      throw new AvhError('invalid-input', 'The hook event is empty (nothing came on standard input).');
    return raw;
  };
  return agent.readEvent({ readStdin, payload: request.payload, env: request.env ?? process.env });
}

/** The folder an event's repository is found from: --repo, else the event's `cwd`, else the process's folder. */
export function hookFolder(cwd: string, repo: string | undefined, event: HookEvent): string {
  return path.resolve(cwd, repo ?? event.cwd ?? '.');
}

export function ignored(event: HookEvent): HookResult {
  const reason = event.action.kind === 'ignore' ? event.action.reason : undefined;
  return { agent: event.agent, event: event.event, action: 'ignored', ...(reason ? { reason } : {}) };
}
