import { spawn } from 'node:child_process';
import { isDeepStrictEqual } from 'node:util';
import type { StoredTurnAnchor } from '../../core/chats/turnAnchors';
import { EXIT } from '../exitCodes';
import { type ConversationFork, type ConversationMechanism, onPath, refusal } from './mechanism';

/**
 * Codex (verified with 0.171.0): `codex app-server`, its JSON-RPC protocol over stdio (`codex app-server
 * generate-ts` prints it). `thread/turns/list` gives the thread's turns in order; `thread/fork { threadId,
 * lastTurnId }` writes a new thread holding the turns through `lastTurnId` (inclusive) — the turn before the undone
 * one; the fork is read back with `thread/turns/list` and removed with `thread/delete` unless its turns are the
 * original's up to there. The user then runs `codex resume <fork>`. The original thread is never written.
 *
 * The anchor: the turn's `UserPromptSubmit` hook names `session_id` (the thread) and `turn_id` (this turn, as the
 * app-server lists it); the turn before it is read from the thread when a fork is asked for.
 */

interface Turn {
  id: string;
  status: string;
  items: unknown[];
}

type Pending = { resolve: (value: unknown) => void; reject: (error: Error) => void };

/** One `codex app-server` process: JSON-RPC requests, one JSON object per line. */
class AppServer {
  private readonly child;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private buffer = '';
  private exited: Error | null = null;

  constructor(file: string, env: NodeJS.ProcessEnv, cwd: string) {
    this.child = spawn(file, ['app-server'], { env, cwd, stdio: ['pipe', 'pipe', 'ignore'] });
    this.child.stdout.setEncoding('utf8');
    this.child.stdout.on('data', (chunk: string) => this.read(chunk));
    const gone = () => {
      this.exited = new Error('codex app-server exited');
      for (const p of this.pending.values()) p.reject(this.exited);
      this.pending.clear();
    };
    this.child.on('exit', gone);
    this.child.on('error', gone);
  }

  private read(chunk: string): void {
    this.buffer += chunk;
    let at: number;
    while ((at = this.buffer.indexOf('\n')) >= 0) {
      const line = this.buffer.slice(0, at);
      this.buffer = this.buffer.slice(at + 1);
      let message: { id?: unknown; result?: unknown; error?: { message?: unknown } };
      try {
        message = JSON.parse(line) as typeof message;
      } catch {
        continue;
      }
      if (typeof message.id !== 'number' || !this.pending.has(message.id)) continue;
      const p = this.pending.get(message.id)!;
      this.pending.delete(message.id);
      if (message.error !== undefined) p.reject(new Error(String(message.error.message ?? 'error')));
      else p.resolve(message.result);
    }
  }

  request<T>(method: string, params: unknown): Promise<T> {
    if (this.exited) return Promise.reject(this.exited);
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.child.stdin.write(`${JSON.stringify({ method, id, params })}\n`);
    });
  }

  notify(method: string): void {
    this.child.stdin.write(`${JSON.stringify({ method })}\n`);
  }

  close(): void {
    this.child.stdin.end();
    this.child.kill();
  }
}

/** Every turn of a thread, oldest first, with its items. */
async function turnsOf(server: AppServer, threadId: string): Promise<Turn[]> {
  const turns: Turn[] = [];
  let cursor: string | null = null;
  do {
    const page: { data: Turn[]; nextCursor: string | null } = await server.request('thread/turns/list', {
      threadId,
      cursor,
      sortDirection: 'asc',
      itemsView: 'full',
    });
    turns.push(...page.data);
    cursor = page.nextCursor;
  } while (cursor !== null);
  return turns;
}

/** A turn's items without the ids the fork gives anew: what the model hears of the turn. */
function heard(turn: Turn): unknown {
  return JSON.parse(JSON.stringify(turn.items, (key, value: unknown) => (key === 'id' ? undefined : value)));
}

async function fork(anchor: StoredTurnAnchor, env: NodeJS.ProcessEnv, cwd: string): Promise<ConversationFork> {
  const file = onPath('codex', env)!;
  const server = new AppServer(file, env, cwd);
  try {
    await server.request('initialize', {
      clientInfo: { name: 'agent_versions', title: 'Agent Version History', version: '1' },
      capabilities: null,
    });
    server.notify('initialized');
    let original: Turn[];
    try {
      original = await turnsOf(server, anchor.chatRef);
    } catch {
      throw refusal('Codex has no thread with this turn’s id any more (deleted or archived).');
    }
    const at = original.findIndex((t) => t.id === anchor.turnRef);
    if (at < 0) throw refusal('Codex’s thread has no turn with this turn’s id, so where it stood before is unknown.');
    if (at === 0)
      throw refusal(
        'This turn began its Codex thread: there is no conversation before it to continue. Start a new chat instead.',
        EXIT.usage,
      );
    const lastTurnId = original[at - 1].id;
    const made: { thread: { id: string }; cwd: string } = await server.request('thread/fork', {
      threadId: anchor.chatRef,
      lastTurnId,
      excludeTurns: true,
    });
    const forkId = made.thread.id;
    let same = false;
    try {
      const forked = await turnsOf(server, forkId);
      same = forked.length === at && forked.every((t, i) => isDeepStrictEqual(heard(t), heard(original[i])));
    } catch {
      same = false;
    }
    if (!same) {
      await server.request('thread/delete', { threadId: forkId }).catch(() => undefined);
      throw refusal(
        'Codex’s fork did not end just before this turn when read back (the protocol may have changed), so it ' +
          'was deleted again.',
      );
    }
    return { forkId, anchorId: lastTurnId, resume: { argv: ['codex', 'resume', forkId], cwd: made.cwd || cwd } };
  } finally {
    server.close();
  }
}

export const codexConversation: ConversationMechanism = {
  agent: 'codex',
  displayName: 'Codex',
  command: 'codex',
  verifiedVersion: '0.171.0',
  versionOf: (line) => /^codex-cli (\d+\.\d+\.\d+)$/.exec(line)?.[1] ?? null,
  // thread/fork's lastTurnId is the app-server protocol of the 0.17x line; the fork is read back either way.
  supports: (version) => version.startsWith('0.17'),
  fork,
};
