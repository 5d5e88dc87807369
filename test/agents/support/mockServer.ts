import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/**
 * The part both model mocks share: an HTTP server on 127.0.0.1 that logs every request (method, path, headers
 * without secrets, parsed body) in memory and, when asked, as JSON lines in a file, and that can hold a response
 * open until the server closes (the "hangs until killed" failure mode). Each API's mock decides the answers.
 */

export interface LoggedRequest {
  /** 1-based, in arrival order. */
  seq: number;
  at: number;
  method: string;
  path: string;
  headers: Record<string, string>;
  body: unknown;
  /** Which scripted step answered it ('default' when the script was empty or the request is not the agent loop's). */
  answeredWith: string;
}

export interface MockHandle {
  /** `http://127.0.0.1:<port>` */
  url: string;
  port: number;
  requests: LoggedRequest[];
  /** Resolves once `count` requests matching `predicate` have arrived (or rejects after timeoutMs). */
  waitFor(predicate: (r: LoggedRequest) => boolean, count?: number, timeoutMs?: number): Promise<LoggedRequest[]>;
  close(): Promise<void>;
}

export type Responder = (request: LoggedRequest, res: http.ServerResponse) => void;

const SECRET_HEADERS = new Set(['authorization', 'x-api-key', 'cookie']);

export async function startMockServer(
  respond: Responder,
  options: { logFile?: string; port?: number } = {},
): Promise<MockHandle> {
  const requests: LoggedRequest[] = [];
  const sockets = new Set<Socket>();
  const waiters: (() => void)[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let body: unknown = raw;
      try {
        body = raw === '' ? null : JSON.parse(raw);
      } catch {
        // kept as text (a compressed or non-JSON body)
      }
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) {
        headers[k] = SECRET_HEADERS.has(k) ? '<redacted>' : String(v);
      }
      const logged: LoggedRequest = {
        seq: requests.length + 1,
        at: Date.now(),
        method: req.method ?? '',
        path: req.url ?? '',
        headers,
        body,
        answeredWith: 'default',
      };
      requests.push(logged);
      try {
        respond(logged, res);
      } catch (error) {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: `mock failed: ${String(error)}` } }));
      }
      if (options.logFile) fs.appendFileSync(options.logFile, `${JSON.stringify(logged)}\n`);
      for (const wake of waiters.splice(0)) wake();
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;

  const waitFor: MockHandle['waitFor'] = (predicate, count = 1, timeoutMs = 30_000) =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`mock: ${count} matching request(s) did not arrive in ${timeoutMs} ms`)),
        timeoutMs,
      );
      const check = () => {
        const found = requests.filter(predicate);
        if (found.length >= count) {
          clearTimeout(timer);
          resolve(found);
        } else waiters.push(check);
      };
      check();
    });

  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    waitFor,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** Writes one server-sent event. */
export function sse(res: http.ServerResponse, event: string | null, data: unknown): void {
  res.write(`${event === null ? '' : `event: ${event}\n`}data: ${JSON.stringify(data)}\n\n`);
}

export function sendJson(res: http.ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}
