import type * as http from 'node:http';
import { LoggedRequest, MockHandle, sendJson, sse, startMockServer } from './mockServer';

/**
 * A scripted Gemini API for the real Gemini CLI, reached with GOOGLE_GEMINI_BASE_URL (its "gateway" auth type:
 * any GEMINI_API_KEY, no Google sign-in). The agent loop is `POST /<version>/models/<model>:streamGenerateContent
 * ?alt=sse` with `tools[].functionDeclarations`; each such request takes the next scripted step. Side requests
 * (`:generateContent` for JSON-schema checks, `:countTokens`) get neutral answers.
 */

export type GeminiStep =
  /** A final model message. */
  | { kind: 'text'; text: string }
  /** Function calls in one model message (`write_file`, `replace`, `run_shell_command`…). */
  | { kind: 'functionCalls'; calls: { name: string; args: Record<string, unknown> }[] }
  /** An HTTP error, `times` requests in a row (the CLI's retries included). */
  | { kind: 'httpError'; status: number; message?: string; times?: number }
  /** The stream sends nothing and never ends, until the connection closes. */
  | { kind: 'hang' };

export const geminiReply = (text: string): GeminiStep => ({ kind: 'text', text });
export const geminiCalls = (...calls: { name: string; args: Record<string, unknown> }[]): GeminiStep => ({
  kind: 'functionCalls',
  calls,
});
export const geminiHttpError = (status: number, times = 1_000): GeminiStep => ({ kind: 'httpError', status, times });
export const geminiHang = (): GeminiStep => ({ kind: 'hang' });

export interface GeminiMock extends MockHandle {
  script(steps: GeminiStep[]): void;
  /** The agent-loop requests so far (streamed generateContent offering tools). */
  turnRequests(): LoggedRequest[];
  remaining(): number;
}

interface GeminiBody {
  tools?: { functionDeclarations?: { name?: string }[] }[];
  contents?: { role?: string; parts?: { text?: string }[] }[];
  generationConfig?: { responseMimeType?: string; responseJsonSchema?: unknown; responseSchema?: unknown };
}

export function isAgentLoopRequest(r: LoggedRequest): boolean {
  const body = r.body as GeminiBody | null;
  return (
    r.method === 'POST' &&
    /:streamGenerateContent/.test(r.path) &&
    (body?.tools ?? []).some((t) => (t.functionDeclarations ?? []).length > 0)
  );
}

/** The function names the CLI offered in a request. */
export function offeredFunctions(r: LoggedRequest): string[] {
  return ((r.body as GeminiBody | null)?.tools ?? []).flatMap((t) =>
    (t.functionDeclarations ?? []).map((f) => f.name ?? '?'),
  );
}

/** The text parts of the request's last user message (where a hook's `<hook_context>` lands). */
export function lastUserText(r: LoggedRequest): string {
  const contents = (r.body as GeminiBody | null)?.contents ?? [];
  const last = [...contents].reverse().find((c) => c.role === 'user');
  return (last?.parts ?? []).map((p) => p.text ?? '').join('\n');
}

export async function startGeminiMock(
  steps: GeminiStep[] = [],
  options: { logFile?: string } = {},
): Promise<GeminiMock> {
  let queue = [...steps];
  let ids = 0;

  const respond = (request: LoggedRequest, res: http.ServerResponse) => {
    if (request.method === 'POST' && /:countTokens/.test(request.path)) return sendJson(res, 200, { totalTokens: 100 });
    if (request.method === 'GET' && /\/models(\?|$)/.test(request.path)) return sendJson(res, 200, { models: [] });
    const streamed = /:streamGenerateContent/.test(request.path);
    if (request.method !== 'POST' || !(streamed || /:generateContent/.test(request.path))) {
      return sendJson(res, 404, { error: { code: 404, message: 'mock: no such route', status: 'NOT_FOUND' } });
    }
    let step: GeminiStep = sideAnswer(request.body as GeminiBody | null);
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
      return sendJson(res, step.status, {
        error: {
          code: step.status,
          message: step.message ?? (step.status >= 500 ? 'mock: server error' : 'mock: invalid request'),
          status: step.status >= 500 ? 'INTERNAL' : 'INVALID_ARGUMENT',
        },
      });
    }
    const response = (parts: Record<string, unknown>[]) => ({
      candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP', index: 0 }],
      usageMetadata: { promptTokenCount: 100, candidatesTokenCount: 20, totalTokenCount: 120 },
      modelVersion: 'mock-model',
      responseId: `mock-${++ids}`,
    });
    if (!streamed) {
      if (step.kind === 'hang') return; // never answers
      return sendJson(res, 200, response(partsOf(step)));
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    if (step.kind === 'hang') return; // never ends
    sse(res, null, response(partsOf(step)));
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

function partsOf(step: Exclude<GeminiStep, { kind: 'httpError' | 'hang' }>): Record<string, unknown>[] {
  return step.kind === 'text'
    ? [{ text: step.text }]
    : step.calls.map((c) => ({ functionCall: { name: c.name, args: c.args } }));
}

/**
 * What a tool-less request gets: JSON-schema requests (the CLI's "who speaks next" and routing checks) a JSON
 * object naming the user as next speaker; anything else a short text.
 */
function sideAnswer(body: GeminiBody | null): GeminiStep {
  if (body?.generationConfig?.responseMimeType === 'application/json') {
    return {
      kind: 'text',
      text: JSON.stringify({ reasoning: 'mock', next_speaker: 'user', model_choice: 'flash' }),
    };
  }
  return { kind: 'text', text: 'Mock summary' };
}
