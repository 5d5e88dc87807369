import type * as http from 'node:http';
import { LoggedRequest, MockHandle, sendJson, sse, startMockServer } from './mockServer';

/**
 * A scripted Anthropic Messages API (`POST /v1/messages`, streaming SSE or plain JSON) for the real Claude Code
 * binary (ANTHROPIC_BASE_URL). Requests of the agent loop (those offering tools) take the next scripted step;
 * every other request (title generation, token counts, side queries) gets a short default answer, so a script
 * counts only the model turns the test means.
 */

export interface ToolCall {
  name: string;
  input: Record<string, unknown>;
  /** Defaults to a fresh `toolu_mock_<n>`. */
  id?: string;
}

export type AnthropicStep =
  /** A final answer (stop_reason end_turn). */
  | { kind: 'text'; text: string }
  /** Tool calls (stop_reason tool_use), optionally after some text. */
  | { kind: 'tools'; calls: ToolCall[]; text?: string }
  /** An HTTP error with the API's error body: 500 api_error, 529 overloaded_error, … `times` requests in a row (retries included). */
  | { kind: 'httpError'; status: number; errorType?: string; message?: string; times?: number }
  /** The stream begins (message_start and some text) and then never ends, until the connection closes. */
  | { kind: 'hang'; text?: string };

export const say = (text: string): AnthropicStep => ({ kind: 'text', text });
export const useTools = (...calls: ToolCall[]): AnthropicStep => ({ kind: 'tools', calls });
export const httpError = (status: number, times = 1_000): AnthropicStep => ({ kind: 'httpError', status, times });
export const hang = (text = 'Working on it'): AnthropicStep => ({ kind: 'hang', text });

export interface AnthropicMock extends MockHandle {
  /** Replaces the remaining script (a test's next phase). */
  script(steps: AnthropicStep[]): void;
  /** The agent-loop requests so far (those the script answers). */
  loopRequests(): LoggedRequest[];
  /** Steps not yet used. */
  remaining(): number;
}

const DEFAULT_MODEL = 'claude-sonnet-4-5';

/** Whether a request is one of the agent loop's model calls (it offers the agent's tools). */
export function isAgentLoopRequest(r: LoggedRequest): boolean {
  const body = r.body as { tools?: { name?: string }[] } | null;
  return (
    r.method === 'POST' &&
    /^\/v1\/messages(\?|$)/.test(r.path) &&
    Array.isArray(body?.tools) &&
    body.tools.some((t) => t.name === 'Bash' || t.name === 'Write')
  );
}

export async function startAnthropicMock(
  steps: AnthropicStep[] = [],
  options: { logFile?: string } = {},
): Promise<AnthropicMock> {
  let queue = [...steps];
  let toolIds = 0;
  let messageIds = 0;

  const respond = (request: LoggedRequest, res: http.ServerResponse) => {
    if (request.method === 'POST' && request.path.startsWith('/v1/messages/count_tokens')) {
      return sendJson(res, 200, { input_tokens: 100 });
    }
    if (request.method !== 'POST' || !/^\/v1\/messages(\?|$)/.test(request.path)) {
      return sendJson(res, 404, { type: 'error', error: { type: 'not_found_error', message: 'mock: no such route' } });
    }
    const body = (request.body ?? {}) as { stream?: boolean; model?: string };
    const model = body.model ?? DEFAULT_MODEL;
    let step: AnthropicStep = { kind: 'text', text: 'ok' };
    if (isAgentLoopRequest(request) && queue.length > 0) {
      step = queue[0];
      if (step.kind === 'httpError' && (step.times ?? 1) > 1) queue[0] = { ...step, times: (step.times ?? 1) - 1 };
      else queue.shift();
      request.answeredWith = step.kind;
    }
    const id = `msg_mock_${++messageIds}`;
    switch (step.kind) {
      case 'httpError':
        return sendJson(res, step.status, {
          type: 'error',
          error: {
            type: step.errorType ?? (step.status === 529 ? 'overloaded_error' : 'api_error'),
            message: step.message ?? (step.status === 529 ? 'Overloaded' : 'Internal server error'),
          },
        });
      case 'hang':
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        sse(res, 'message_start', messageStart(id, model));
        sse(res, 'content_block_start', {
          type: 'content_block_start',
          index: 0,
          content_block: { type: 'text', text: '' },
        });
        sse(res, 'content_block_delta', {
          type: 'content_block_delta',
          index: 0,
          delta: { type: 'text_delta', text: step.text ?? '' },
        });
        return; // never ends: the server's close destroys the socket
      case 'text':
      case 'tools': {
        const blocks: ContentBlock[] = [];
        const text = step.kind === 'text' ? step.text : step.text;
        if (text) blocks.push({ type: 'text', text });
        if (step.kind === 'tools') {
          for (const call of step.calls) {
            blocks.push({
              type: 'tool_use',
              id: call.id ?? `toolu_mock_${++toolIds}`,
              name: call.name,
              input: call.input,
            });
          }
        }
        const stopReason = step.kind === 'tools' ? 'tool_use' : 'end_turn';
        if (body.stream) streamMessage(res, id, model, blocks, stopReason);
        else
          sendJson(res, 200, {
            ...messageStart(id, model).message,
            content: blocks,
            stop_reason: stopReason,
            usage: { input_tokens: 100, output_tokens: 20 },
          });
        return;
      }
    }
  };

  const handle = await startMockServer(respond, options);
  return {
    ...handle,
    script: (next) => {
      queue = [...next];
    },
    loopRequests: () => handle.requests.filter(isAgentLoopRequest),
    remaining: () => queue.length,
  };
}

type ContentBlock =
  { type: 'text'; text: string } | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> };

function messageStart(id: string, model: string) {
  return {
    type: 'message_start',
    message: {
      id,
      type: 'message',
      role: 'assistant',
      model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 100, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
    },
  };
}

function streamMessage(
  res: http.ServerResponse,
  id: string,
  model: string,
  blocks: ContentBlock[],
  stopReason: string,
): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  sse(res, 'message_start', messageStart(id, model));
  blocks.forEach((block, index) => {
    if (block.type === 'text') {
      sse(res, 'content_block_start', {
        type: 'content_block_start',
        index,
        content_block: { type: 'text', text: '' },
      });
      sse(res, 'content_block_delta', {
        type: 'content_block_delta',
        index,
        delta: { type: 'text_delta', text: block.text },
      });
    } else {
      sse(res, 'content_block_start', {
        type: 'content_block_start',
        index,
        content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} },
      });
      sse(res, 'content_block_delta', {
        type: 'content_block_delta',
        index,
        delta: { type: 'input_json_delta', partial_json: JSON.stringify(block.input) },
      });
    }
    sse(res, 'content_block_stop', { type: 'content_block_stop', index });
  });
  sse(res, 'message_delta', {
    type: 'message_delta',
    delta: { stop_reason: stopReason, stop_sequence: null },
    usage: { output_tokens: 20 },
  });
  sse(res, 'message_stop', { type: 'message_stop' });
  res.end();
}
