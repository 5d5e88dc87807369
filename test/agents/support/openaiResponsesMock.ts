import type * as http from 'node:http';
import { LoggedRequest, MockHandle, sendJson, sse, startMockServer } from './mockServer';

/**
 * A scripted OpenAI Responses API (`POST <base>/responses`, SSE) for the real Codex binary, reached through a
 * custom `model_providers` entry (codexSession.ts writes it). Every `/responses` request of the user's thread takes
 * the next scripted step; side threads (the TUI's title request) and a used-up script get a short final message.
 * Other routes (`/models`) get an empty list.
 */

export type ResponsesStep =
  /** A final assistant message. */
  | { kind: 'text'; text: string }
  /** Function calls (`shell`, `exec_command`, `update_plan`…): arguments are JSON-encoded as the API does. */
  | { kind: 'functionCalls'; calls: { name: string; arguments: Record<string, unknown>; callId?: string }[] }
  /** A freeform (custom) tool call, as Codex's `apply_patch` is offered to GPT-5 models: `input` is the raw patch. */
  | { kind: 'customToolCall'; name: string; input: string; callId?: string }
  /** An HTTP error, `times` requests in a row (retries included). */
  | { kind: 'httpError'; status: number; message?: string; times?: number }
  /** `response.failed` inside a 200 stream (the API's in-band error). */
  | { kind: 'failed'; code?: string; message?: string }
  /** The stream starts (response.created) and never ends, until the connection closes. */
  | { kind: 'hang' };

export const reply = (text: string): ResponsesStep => ({ kind: 'text', text });
export const callFunctions = (
  ...calls: { name: string; arguments: Record<string, unknown>; callId?: string }[]
): ResponsesStep => ({ kind: 'functionCalls', calls });
export const applyPatch = (patch: string): ResponsesStep => ({
  kind: 'customToolCall',
  name: 'apply_patch',
  input: patch,
});
export const responsesHttpError = (status: number, times = 1_000): ResponsesStep => ({
  kind: 'httpError',
  status,
  times,
});
export const responsesHang = (): ResponsesStep => ({ kind: 'hang' });

export interface OpenAiResponsesMock extends MockHandle {
  script(steps: ResponsesStep[]): void;
  /** The `/responses` requests of the user's thread so far (those the script answers). */
  turnRequests(): LoggedRequest[];
  remaining(): number;
}

export function isResponsesRequest(r: LoggedRequest): boolean {
  return r.method === 'POST' && /\/responses(\?|$)/.test(r.path);
}

/**
 * Whether a `/responses` request belongs to the user's thread. The TUI also runs a side thread that asks the model
 * for a title ("Generate a concise, single-line task title…", `thread_source: "thread_title"` in the
 * `x-codex-turn-metadata` client metadata), with the same tools: it must not eat the script's tool calls.
 */
export function isUserThreadRequest(r: LoggedRequest): boolean {
  if (!isResponsesRequest(r)) return false;
  const meta = (r.body as { client_metadata?: Record<string, unknown> } | null)?.client_metadata?.[
    'x-codex-turn-metadata'
  ];
  if (typeof meta !== 'string') return true;
  try {
    const source = (JSON.parse(meta) as { thread_source?: unknown }).thread_source;
    return source === undefined || source === null || source === 'user';
  } catch {
    return true;
  }
}

export async function startOpenAiResponsesMock(
  steps: ResponsesStep[] = [],
  options: { logFile?: string } = {},
): Promise<OpenAiResponsesMock> {
  let queue = [...steps];
  let ids = 0;

  const respond = (request: LoggedRequest, res: http.ServerResponse) => {
    if (!isResponsesRequest(request)) {
      if (request.method === 'GET' && /\/models(\?|$)/.test(request.path)) return sendJson(res, 200, { models: [] });
      return sendJson(res, 404, { error: { message: 'mock: no such route', type: 'invalid_request_error' } });
    }
    let step: ResponsesStep = { kind: 'text', text: 'ok' };
    if (isUserThreadRequest(request) && queue.length > 0) {
      step = queue[0];
      if (step.kind === 'httpError' && (step.times ?? 1) > 1) queue[0] = { ...step, times: (step.times ?? 1) - 1 };
      else queue.shift();
      request.answeredWith = step.kind;
    }
    const responseId = `resp_mock_${++ids}`;
    if (step.kind === 'httpError') {
      return sendJson(res, step.status, {
        error: { message: step.message ?? 'mock: server error', type: 'server_error', code: null },
      });
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    sse(res, 'response.created', { type: 'response.created', response: { id: responseId } });
    switch (step.kind) {
      case 'hang':
        return; // never ends
      case 'failed':
        sse(res, 'response.failed', {
          type: 'response.failed',
          response: {
            id: responseId,
            error: { code: step.code ?? 'server_error', message: step.message ?? 'mock: failed' },
          },
        });
        return void res.end();
      case 'text':
        outputItem(res, {
          type: 'message',
          role: 'assistant',
          id: `msg_${responseId}`,
          content: [{ type: 'output_text', text: step.text }],
        });
        break;
      case 'functionCalls':
        for (const call of step.calls) {
          outputItem(res, {
            type: 'function_call',
            id: `fc_${responseId}_${call.name}`,
            call_id: call.callId ?? `call_mock_${++ids}`,
            name: call.name,
            arguments: JSON.stringify(call.arguments),
          });
        }
        break;
      case 'customToolCall':
        outputItem(res, {
          type: 'custom_tool_call',
          id: `ctc_${responseId}`,
          call_id: step.callId ?? `call_mock_${++ids}`,
          name: step.name,
          input: step.input,
        });
        break;
    }
    sse(res, 'response.completed', {
      type: 'response.completed',
      response: {
        id: responseId,
        usage: {
          input_tokens: 100,
          input_tokens_details: null,
          output_tokens: 20,
          output_tokens_details: null,
          total_tokens: 120,
        },
      },
    });
    res.end();
  };

  const handle = await startMockServer(respond, options);
  return {
    ...handle,
    script: (next) => {
      queue = [...next];
    },
    turnRequests: () => handle.requests.filter(isUserThreadRequest),
    remaining: () => queue.length,
  };
}

function outputItem(res: http.ServerResponse, item: Record<string, unknown>): void {
  sse(res, 'response.output_item.added', { type: 'response.output_item.added', item });
  sse(res, 'response.output_item.done', { type: 'response.output_item.done', item });
}
