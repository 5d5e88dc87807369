import type * as http from 'node:http';
import { LoggedRequest, MockHandle, sendJson, sse, startMockServer } from './mockServer';

/**
 * A scripted OpenAI Chat Completions API (`POST <base>/chat/completions`, SSE `chat.completion.chunk`s) for the
 * agents that speak it to a custom provider: GitHub Copilot CLI in BYOK mode (COPILOT_PROVIDER_BASE_URL, wire API
 * "completions") and opencode (an `@ai-sdk/openai-compatible` provider with a baseURL in opencode.json).
 *
 * Only agent-loop requests (those offering tools) take scripted steps: both agents also send tool-less side
 * requests (session titles, prompt refinement) that would otherwise eat the script; those get a short title.
 */

export type ChatStep =
  /** A final assistant message. */
  | { kind: 'text'; text: string }
  /** Tool calls in one assistant message (`arguments` JSON-encoded as the API does), finish_reason "tool_calls". */
  | { kind: 'toolCalls'; calls: { name: string; arguments: Record<string, unknown>; id?: string }[] }
  /** An HTTP error, `times` requests in a row (the agents' retries included). */
  | { kind: 'httpError'; status: number; message?: string; times?: number }
  /** The stream starts (role delta) and never ends, until the connection closes. */
  | { kind: 'hang' };

export const chatReply = (text: string): ChatStep => ({ kind: 'text', text });
export const chatToolCalls = (
  ...calls: { name: string; arguments: Record<string, unknown>; id?: string }[]
): ChatStep => ({
  kind: 'toolCalls',
  calls,
});
export const chatHttpError = (status: number, times = 1_000): ChatStep => ({ kind: 'httpError', status, times });
export const chatHang = (): ChatStep => ({ kind: 'hang' });

export interface OpenAiChatMock extends MockHandle {
  script(steps: ChatStep[]): void;
  /** The agent-loop requests so far (chat completions that offer tools). */
  turnRequests(): LoggedRequest[];
  remaining(): number;
}

export const MOCK_MODEL = 'mock-model';

export function isChatRequest(r: LoggedRequest): boolean {
  return r.method === 'POST' && /\/chat\/completions(\?|$)/.test(r.path);
}

/** A chat completion that offers tools: the agent's own loop, not a title or a summary. */
export function isAgentLoopRequest(r: LoggedRequest): boolean {
  const tools = (r.body as { tools?: unknown[] } | null)?.tools;
  return isChatRequest(r) && Array.isArray(tools) && tools.length > 0;
}

/** The names of the tools the agent offered in a request (to learn the exact names a step must call). */
export function offeredTools(r: LoggedRequest): string[] {
  const tools = (r.body as { tools?: { function?: { name?: string } }[] } | null)?.tools ?? [];
  return tools.map((t) => t.function?.name ?? '?');
}

export async function startOpenAiChatMock(
  steps: ChatStep[] = [],
  options: { logFile?: string } = {},
): Promise<OpenAiChatMock> {
  let queue = [...steps];
  let ids = 0;

  const respond = (request: LoggedRequest, res: http.ServerResponse) => {
    if (request.method === 'GET' && /\/models(\?|$)/.test(request.path)) {
      return sendJson(res, 200, { object: 'list', data: [{ id: MOCK_MODEL, object: 'model', owned_by: 'mock' }] });
    }
    if (!isChatRequest(request)) {
      return sendJson(res, 404, { error: { message: 'mock: no such route', type: 'invalid_request_error' } });
    }
    let step: ChatStep = { kind: 'text', text: 'Mock title' };
    if (isAgentLoopRequest(request)) {
      step = { kind: 'text', text: 'ok' };
      if (queue.length > 0) {
        step = queue[0];
        if (step.kind === 'httpError' && (step.times ?? 1) > 1) queue[0] = { ...step, times: (step.times ?? 1) - 1 };
        else queue.shift();
        request.answeredWith = step.kind;
      }
    }
    if (step.kind === 'httpError') {
      // A 4xx reads as the client's fault (opencode retries anything that mentions a server error, even a 400).
      const server = step.status >= 500;
      return sendJson(res, step.status, {
        error: {
          message: step.message ?? (server ? 'mock: server error' : 'mock: invalid request'),
          type: server ? 'server_error' : 'invalid_request_error',
          code: null,
        },
      });
    }
    const id = `chatcmpl-mock-${++ids}`;
    const body = request.body as { stream?: boolean } | null;
    if (body?.stream !== true) return sendJson(res, 200, completion(id, step));
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const chunk = (delta: Record<string, unknown>, finish: string | null, extra: Record<string, unknown> = {}) =>
      sse(res, null, {
        id,
        object: 'chat.completion.chunk',
        created: Math.floor(Date.now() / 1000),
        model: MOCK_MODEL,
        choices: [{ index: 0, delta, finish_reason: finish }],
        ...extra,
      });
    chunk({ role: 'assistant', content: '' }, null);
    if (step.kind === 'hang') return; // never ends
    if (step.kind === 'text') {
      chunk({ content: step.text }, null);
      chunk({}, 'stop', { usage: USAGE });
    } else {
      step.calls.forEach((call, index) =>
        chunk(
          {
            tool_calls: [
              {
                index,
                id: call.id ?? `call_mock_${++ids}`,
                type: 'function',
                function: { name: call.name, arguments: JSON.stringify(call.arguments) },
              },
            ],
          },
          null,
        ),
      );
      chunk({}, 'tool_calls', { usage: USAGE });
    }
    res.write('data: [DONE]\n\n');
    res.end();
  };

  const handle = await startMockServer(respond, options);
  return {
    ...handle,
    script: (next) => {
      queue = [...next];
    },
    turnRequests: () => handle.requests.filter(isAgentLoopRequest),
    remaining: () => queue.length,
  };
}

const USAGE = { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 };

function completion(id: string, step: Exclude<ChatStep, { kind: 'httpError' }>): Record<string, unknown> {
  const message =
    step.kind === 'toolCalls'
      ? {
          role: 'assistant',
          content: null,
          tool_calls: step.calls.map((c, i) => ({
            id: c.id ?? `call_mock_${i}`,
            type: 'function',
            function: { name: c.name, arguments: JSON.stringify(c.arguments) },
          })),
        }
      : { role: 'assistant', content: step.kind === 'text' ? step.text : '' };
  return {
    id,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: MOCK_MODEL,
    choices: [{ index: 0, message, finish_reason: step.kind === 'toolCalls' ? 'tool_calls' : 'stop' }],
    usage: USAGE,
  };
}
