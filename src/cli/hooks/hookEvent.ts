import * as path from 'node:path';
import { AvhError } from '../../core/errors';
import type { TerminalOutcome } from '../../core/outcomes';
import type { TurnAnchor } from '../../core/chats/turnAnchors';
import type { ToolWrites } from '../../core/turns/toolWrites';

/**
 * One agent hook event, reduced to what Version History does with it. Every agent (src/cli/agents/) parses its
 * payload into this shape; runHook.ts (the full path) and fastHook.ts (the fast path) act on it.
 */
export interface HookEvent {
  /**
   * The agent's name as stored with the turn and shown in Version History ('claude-code', 'codex', 'copilot',
   * 'copilot-cli', 'gemini', 'opencode').
   */
  agent: string;
  /** The event's name as the agent sent it (echoed in --json output; never a prompt). */
  event: string;
  /**
   * The conversation the turn belongs to. Agents other than Claude Code get their agent's name as a prefix
   * (`copilot:<sessionId>`), so two agents' sessions can never share a chat even if their ids were equal.
   */
  chatId: string;
  /** Where the agent runs: the repository is found from here unless --repo is given. */
  cwd?: string;
  action: HookAction;
  /**
   * false: what the hook prints cannot reach the model (an opencode plugin written before notes, which ignores the
   * hook's stdout), so a begin leaves the chat's notes waiting (core/chats/chatNotes.ts).
   */
  hearsContext?: false;
}

export type HookAction =
  /** `anchor`: where the turn sits in the agent's own conversation, when its payload names it (issue 32). */
  | { kind: 'begin'; prompt: string; anchor?: TurnAnchor }
  | { kind: 'end'; outcome: TerminalOutcome }
  /** A tool of the running turn wrote files (absolute paths) or ran a shell command (docs/design/two-chats.md). */
  | ({ kind: 'wrote' } & ToolWrites)
  /**
   * A tool of the running turn is about to run this shell command (issue 34): a checkpoint is taken first when the
   * command destroys working-tree content (destructiveCommand/); anything else returns at once.
   */
  | { kind: 'before-command'; command: string; argv?: readonly string[] }
  /** `another-agent`: the event came from an agent that records itself through its own hooks (claudeCode.ts). */
  | { kind: 'ignore'; reason?: 'another-agent' };

export type JsonObject = Record<string, unknown>;

function invalid(message: string): AvhError {
  return new AvhError('invalid-input', message);
}

/** The payload as a JSON object; the message names what is wrong, never the payload (it may hold a prompt). */
export function parseJsonObject(raw: string, what: string): JsonObject {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    throw invalid(`The ${what} is not valid JSON.`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw invalid(`The ${what} must be a JSON object.`);
  return value as JsonObject;
}

/** A required non-empty string field. */
export function requiredString(o: JsonObject, field: string, what: string): string {
  const value = o[field];
  if (typeof value !== 'string' || value.length === 0) throw invalid(`The ${what} has no ${field}.`);
  return value;
}

/** An optional string field (null counts as absent, as several agents send it). */
export function optionalString(o: JsonObject, field: string, what: string): string | undefined {
  const value = o[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw invalid(`The ${what} field ${field} must be a string.`);
  return value;
}

/**
 * The fields every agent's hooks send, snake_case (Claude Code, Codex, Copilot CLI and VS Code, Gemini CLI, our
 * opencode plugin): the event, the session, where it runs, the prompt.
 */
export function snakeCaseFields(
  o: JsonObject,
  what: string,
): { event: string; session: string; cwd?: string; prompt?: string } {
  return {
    event: requiredString(o, 'hook_event_name', what),
    session: requiredString(o, 'session_id', what),
    cwd: optionalString(o, 'cwd', what),
    prompt: optionalString(o, 'prompt', what),
  };
}

/**
 * What one of an agent's hook events does: begin a turn, end the chat's running turn with this outcome, report
 * the files a tool of the running turn wrote ('wrote': the agent's `toolWrites` reads them), or announce a tool
 * about to run ('before-tool': the agent's shell command is read from it).
 */
export type EventEffect = 'begin' | TerminalOutcome | 'wrote' | 'before-tool';

/**
 * An agent's hook events by name, in the order `connect` writes them. A Map, never an object literal: an event
 * named `toString`, `constructor` or `__proto__` must find nothing, as any other event the agent does not list.
 */
export type HookEventTable = ReadonlyMap<string, EventEffect>;

export function hookEventTable(entries: readonly (readonly [string, EventEffect])[]): HookEventTable {
  return new Map(entries);
}

/**
 * The lifecycle every supported agent shares: a submitted prompt begins a turn, and its end event ends it with the
 * table's outcome (each agent's table lists the events it sends). Events not in the table (tool events,
 * SessionStart, …) are ignored.
 */
export function lifecycleAction(
  event: string,
  prompt: string | undefined,
  events: HookEventTable,
  writes?: () => ToolWrites | null,
  command?: () => ShellCommand | null,
): HookAction {
  const effect = events.get(event);
  if (effect === undefined) return { kind: 'ignore' };
  if (effect === 'before-tool') {
    const shell = command?.() ?? null;
    return shell !== null ? { kind: 'before-command', ...shell } : { kind: 'ignore' };
  }
  if (effect === 'wrote') {
    const wrote = writes?.() ?? null;
    return wrote ? { kind: 'wrote', ...wrote } : { kind: 'ignore' };
  }
  return effect === 'begin' ? { kind: 'begin', prompt: prompt ?? '' } : { kind: 'end', outcome: effect };
}

/** The object field `field` of a payload, or an empty object (a tool's input the agent did not send). */
export function objectField(o: JsonObject, field: string): JsonObject {
  const value = o[field];
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as JsonObject) : {};
}

/** A string field as a path resolved against `cwd` (absolute as given), or nothing when it is not a string. */
export function reportedPath(value: unknown, cwd: string | undefined): string[] {
  if (typeof value !== 'string' || value.length === 0 || value.length > 4096 || value.includes('\0')) return [];
  if (path.isAbsolute(value)) return [path.normalize(value)];
  return cwd !== undefined && path.isAbsolute(cwd) ? [path.resolve(cwd, value)] : [];
}

/** A shell command as a tool sends it: its text, and the argv when the tool sent one instead of a line. */
export interface ShellCommand {
  command: string;
  argv?: readonly string[];
}

/** A shell tool's command (`tool_input.command`: a line, or an argv as Codex may send), or null. */
export function shellCommandOf(value: unknown): ShellCommand | null {
  if (typeof value === 'string') return value.length > 0 ? { command: value } : null;
  if (Array.isArray(value) && value.length > 0 && value.every((v) => typeof v === 'string'))
    return { command: (value as string[]).join(' '), argv: value as string[] };
  return null;
}
