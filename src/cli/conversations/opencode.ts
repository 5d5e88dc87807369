import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as net from 'node:net';
import { isDeepStrictEqual } from 'node:util';
import type { StoredTurnAnchor } from '../../core/chats/turnAnchors';
import { CliError, EXIT } from '../exitCodes';
import { type ConversationFork, type ConversationMechanism, onPath, refusal } from './mechanism';

/**
 * opencode (verified with 1.18.33): its own HTTP server, `opencode serve`, started for the fork and stopped after it.
 * `POST /session/:id/fork { messageID }` writes a new session holding copies of the messages before that message
 * (exclusive), with fresh ids; `GET /session/:id/message` reads a session's messages back (all of them, oldest
 * first); `DELETE /session/:id` removes what we made when the read-back does not match. The user then runs
 * `opencode --session <fork>` in the session's folder. The original session is never written.
 *
 * The anchor: our plugin (`connect opencode`) sends the user message's id from `chat.message` (`output.message.id`,
 * the id opencode stores the prompt under) and the session's id. The fork is asked for at that message, so it holds
 * what came before the turn's prompt. opencode 1.18.33 copies the WHOLE session when it has no message with the id
 * given: the message is looked up first, and the read-back would catch it anyway.
 *
 * The server: on 127.0.0.1 and a free port, with a password of its own (basic auth: otherwise any local process could
 * use it while it runs), `--pure` (no plugins: ours and the user's stay out of it), in the folder `chat fork` runs in.
 * It reads the same database as the user's opencode (`$XDG_DATA_HOME/opencode`, from the same environment); a
 * session is found by its id whatever the folder, and the fork is made in the original session's folder.
 */

const VERIFIED = '1.18.33';
/** How long `opencode serve` may take to listen (about a second here), and one request to answer. */
const START_TIMEOUT_MS = 30_000;
const REQUEST_TIMEOUT_MS = 60_000;

interface MessageWithParts {
  info: { id: string; role: string; [key: string]: unknown };
  parts: unknown[];
}

interface SessionInfo {
  id: string;
  directory: string;
}

/** A port free now on 127.0.0.1 (the server is given it; should it be taken meanwhile, the server fails to start). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

class ServerError extends Error {
  constructor(readonly status: number | null) {
    super(status === null ? 'opencode serve did not answer' : `opencode serve answered HTTP ${status}`);
  }
}

/** One `opencode serve` process, ours alone (its own password), stopped by close(). */
class OpencodeServer {
  private constructor(
    private readonly child: ChildProcess,
    private readonly url: string,
    private readonly authorization: string,
  ) {}

  static async start(file: string, env: NodeJS.ProcessEnv, cwd: string): Promise<OpencodeServer> {
    const port = await freePort();
    const username = 'agent-versions';
    const password = randomBytes(24).toString('hex');
    const child = spawn(file, ['serve', '--pure', '--hostname', '127.0.0.1', '--port', String(port)], {
      cwd,
      // opencode takes its project folder from $PWD before its working directory.
      env: { ...env, PWD: cwd, OPENCODE_SERVER_USERNAME: username, OPENCODE_SERVER_PASSWORD: password },
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    const expected = `http://127.0.0.1:${port}`;
    const listening = await new Promise<boolean>((resolve) => {
      let out = '';
      const timer = setTimeout(() => resolve(false), START_TIMEOUT_MS);
      const done = (ok: boolean) => {
        clearTimeout(timer);
        resolve(ok);
      };
      child.stdout!.setEncoding('utf8');
      child.stdout!.on('data', (chunk: string) => {
        out += chunk;
        const m = /opencode server listening on (\S+)/.exec(out);
        if (m) done(m[1] === expected);
        else if (out.length > 65_536) out = out.slice(-1024);
      });
      child.on('error', () => done(false));
      child.on('exit', () => done(false));
    });
    const server = new OpencodeServer(
      child,
      expected,
      `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`,
    );
    if (!listening) {
      await server.close();
      throw refusal('opencode’s server (`opencode serve`) did not start, so the session could not be forked.');
    }
    return server;
  }

  /** One request; the answer's JSON, or a ServerError with the status (never the body: it may hold the chat). */
  async request<T>(method: string, route: string, body?: unknown): Promise<T> {
    let response: Response;
    try {
      response = await fetch(`${this.url}${route}`, {
        method,
        headers: {
          authorization: this.authorization,
          ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
    } catch {
      throw new ServerError(null);
    }
    if (!response.ok) {
      await response.body?.cancel();
      throw new ServerError(response.status);
    }
    return (await response.json()) as T;
  }

  /** Stops the server and waits for it to exit (killed if it has not within 5 s). */
  close(): Promise<void> {
    const child = this.child;
    if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      child.once('exit', () => {
        clearTimeout(timer);
        resolve();
      });
      child.kill();
    });
  }
}

/**
 * A session's messages as the model hears them, without the ids the fork makes anew: each message's own id, session
 * id and message id go, and a reference to another message of the list (an assistant's `parentID`, a compaction's
 * `tail_start_id`) becomes that message's place in the list.
 */
function heard(messages: MessageWithParts[]): unknown {
  const place = new Map(messages.map((m, i) => [m.info.id, `#${i}`]));
  return JSON.parse(JSON.stringify(messages), (key, value: unknown) => {
    if (key === 'id' || key === 'sessionID' || key === 'messageID') return undefined;
    return typeof value === 'string' && place.has(value) ? place.get(value) : value;
  });
}

const segment = encodeURIComponent;

async function fork(anchor: StoredTurnAnchor, env: NodeJS.ProcessEnv, cwd: string): Promise<ConversationFork> {
  const file = onPath('opencode', env)!;
  const server = await OpencodeServer.start(file, env, cwd);
  try {
    const session = segment(anchor.chatRef);
    let original: MessageWithParts[];
    let info: SessionInfo;
    try {
      info = await server.request<SessionInfo>('GET', `/session/${session}`);
      original = await server.request<MessageWithParts[]>('GET', `/session/${session}/message`);
    } catch (error) {
      if (error instanceof ServerError && error.status === 404)
        throw refusal('opencode has no session with this turn’s id any more (deleted).');
      throw refusal('opencode’s server did not answer as expected when asked for this turn’s session.');
    }
    const at = original.findIndex((m) => m.info.id === anchor.turnRef);
    if (at < 0 || original[at].info.role !== 'user')
      throw refusal('opencode’s session has no prompt with this turn’s id, so where it stood before is unknown.');
    if (at === 0)
      throw refusal(
        'This turn began its opencode session: there is no conversation before it to continue. Start a new chat ' +
          'instead.',
        EXIT.usage,
      );
    const directory = `?directory=${segment(info.directory)}`;
    let forkId: string;
    try {
      ({ id: forkId } = await server.request<{ id: string }>('POST', `/session/${session}/fork${directory}`, {
        messageID: anchor.turnRef,
      }));
    } catch {
      throw refusal('opencode could not fork this session at the turn’s prompt.');
    }
    let same = false;
    try {
      const forked = await server.request<MessageWithParts[]>('GET', `/session/${segment(forkId)}/message`);
      same = forked.length === at && isDeepStrictEqual(heard(forked), heard(original.slice(0, at)));
    } catch {
      same = false;
    }
    if (!same) {
      const removed = await server
        .request('DELETE', `/session/${segment(forkId)}${directory}`)
        .then(() => true)
        .catch(() => false);
      if (!removed)
        throw new CliError(
          `opencode’s fork did not end just before this turn when read back, and removing it failed: delete the ` +
            `session ${forkId} in opencode (\`opencode session delete ${forkId}\`).`,
          EXIT.failed,
        );
      throw refusal(
        'opencode’s fork did not end just before this turn when read back (its session format may have changed), ' +
          'so it was deleted again.',
      );
    }
    return {
      forkId,
      anchorId: original[at - 1].info.id,
      resume: { argv: ['opencode', '--session', forkId], cwd: info.directory },
    };
  } finally {
    await server.close();
  }
}

export const opencodeConversation: ConversationMechanism = {
  agent: 'opencode',
  displayName: 'opencode',
  command: 'opencode',
  verifiedVersion: VERIFIED,
  versionOf: (line) => /^(\d+\.\d+\.\d+)$/.exec(line)?.[1] ?? null,
  // The server API of the 1.x line (its session routes); the fork is read back and deleted again if it does not match.
  supports: (version) => version.startsWith('1.'),
  unknownAnchor:
    'A plugin written by an older agent-versions does not name it: run `agent-versions connect opencode` again ' +
    '(`doctor` says when the plugin is out of date), and turns from then on can be continued.',
  fork,
};
