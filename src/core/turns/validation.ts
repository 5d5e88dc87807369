import { type TurnAnchor, validateTurnAnchor } from '../chats/turnAnchors';
import { AvhError } from '../errors';
import { isTerminalOutcome, TerminalOutcome } from '../outcomes';

const ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:@/+=-]{0,199}$/;
const MAX_PROMPT_BYTES = 1024 * 1024;

export interface BeginTurnInput {
  chatId: string;
  prompt: string;
  agent?: string;
  chatTitle?: string;
  /** The branch a new chat started from (issue 10); default: the remote's default branch, else the current one. */
  baseBranch?: string;
  /** Where the turn sits in the agent's own conversation (issue 32: ids only, chats/turnAnchors.ts). */
  anchor?: TurnAnchor;
}

function invalid(message: string): AvhError {
  return new AvhError('invalid-input', message);
}

/** Validates untrusted input for beginTurn; messages name the field, never echo the value. */
export function validateBeginTurn(input: unknown): BeginTurnInput {
  if (typeof input !== 'object' || input === null || Array.isArray(input))
    throw invalid('beginTurn expects an object { chatId, prompt, agent?, chatTitle? }.');
  const o = input as Record<string, unknown>;
  const allowed = new Set(['chatId', 'prompt', 'agent', 'chatTitle', 'baseBranch', 'anchor']);
  for (const key of Object.keys(o))
    if (!allowed.has(key)) throw invalid(`beginTurn does not accept the field "${key.slice(0, 40)}".`);
  const chatId = validateChatId(o.chatId);
  if (typeof o.prompt !== 'string') throw invalid('prompt must be a string.');
  if (Buffer.byteLength(o.prompt, 'utf8') > MAX_PROMPT_BYTES) throw invalid('prompt is larger than 1 MiB.');
  const agent = optionalLabel(o.agent, 'agent', 100);
  const chatTitle = optionalLabel(o.chatTitle, 'chatTitle', 200);
  const baseBranch =
    o.baseBranch === undefined || o.baseBranch === null ? undefined : validateBranchName(o.baseBranch, 'baseBranch');
  const anchor = o.anchor === undefined ? undefined : validateTurnAnchor(o.anchor);
  return {
    chatId,
    prompt: o.prompt,
    ...(agent !== undefined ? { agent } : {}),
    ...(chatTitle !== undefined ? { chatTitle } : {}),
    ...(baseBranch !== undefined ? { baseBranch } : {}),
    ...(anchor !== undefined ? { anchor } : {}),
  };
}

export function validateChatId(chatId: unknown): string {
  if (typeof chatId !== 'string' || !ID_PATTERN.test(chatId)) {
    throw invalid(
      'chatId must be 1–200 characters of letters, digits and . _ : @ / + = -, starting with a letter or digit.',
    );
  }
  return chatId;
}

/** A branch name git would accept (the rules of `git check-ref-format --branch`, checked without running git). */
export function validateBranchName(value: unknown, field: string): string {
  const ok =
    typeof value === 'string' &&
    value.length > 0 &&
    value.length <= 250 &&
    !value.startsWith('-') &&
    !value.startsWith('/') &&
    // eslint-disable-next-line no-control-regex -- control characters are refused
    !/[\u0000-\u0020\u007f~^:?*[\\]|\.\.|@\{|\/\/|\/\.|\.lock$|\.lock\/|\.$|\/$/.test(value) &&
    value !== '@';
  if (!ok) throw invalid(`${field} must be a valid git branch name.`);
  return value as string;
}

function optionalLabel(value: unknown, field: string, max: number): string | undefined {
  if (value === undefined || value === null) return undefined;
  // eslint-disable-next-line no-control-regex -- labels are single-line: control characters are refused
  if (typeof value !== 'string' || value.length === 0 || value.length > max || /[\u0000-\u001f\u007f]/.test(value)) {
    throw invalid(`${field} must be a single-line string of 1–${max} characters.`);
  }
  return value;
}

export function validateTurnId(value: unknown): string {
  if (typeof value !== 'string' || !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(value)) {
    throw invalid('turnId must be the id returned by beginTurn.');
  }
  return value;
}

export function validateOutcome(value: unknown): TerminalOutcome {
  if (!isTerminalOutcome(value)) throw invalid('outcome must be one of completed, cancelled, errored.');
  return value;
}
