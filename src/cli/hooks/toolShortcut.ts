import { mayMention } from './commandMentions';

/**
 * The shortcut of the CLI's entry for a pre-tool event (issue 34): connect writes tool events as `hook <agent> --tool`,
 * so the entry knows before anything else loads that the event needs no git; and a pre-tool event whose command names
 * none of the programs the classifier recognises (commandMentions.ts) is answered there, as the fast path would answer
 * it (ignored, exit 0, nothing printed), without loading the hook's code (~5 ms of Node here). Anything else — another
 * event, --json, a payload this reading is not sure of — goes on to the fast path unchanged.
 */

/** The agents' pre-tool events (the 'before-tool' events of their tables; a unit test keeps the two equal). */
export const PRE_TOOL_EVENTS: ReadonlySet<string> = new Set(['PreToolUse', 'BeforeTool', 'tool.execute.before']);

/** The agents `hook` takes (agents/registry.ts; a unit test keeps the two equal): others are the CLI's to refuse. */
export const HOOK_AGENTS: ReadonlySet<string> = new Set(['claude-code', 'codex', 'copilot', 'gemini', 'opencode']);

/** The options after `hook <agent>` the shortcut takes: connect's pre-tool entry has these and no others. */
const SHORTCUT_OPTIONS: ReadonlySet<string> = new Set(['--tool', '--guard-destructive']);

/**
 * Whether `hook <agent> --tool [--guard-destructive]` with this payload is a pre-tool event that certainly runs no
 * command the classifier recognises: every agent reads its shell tool's command from `tool_input.command` or, in our
 * opencode plugin's payload, `command` (a line or an argv); neither mentions any such program.
 */
export function harmlessPreTool(argv: readonly string[], raw: string): boolean {
  if (argv[0] !== 'hook' || !HOOK_AGENTS.has(argv[1]) || !argv.includes('--tool')) return false;
  if (!argv.slice(2).every((a) => SHORTCUT_OPTIONS.has(a))) return false;
  let event: unknown;
  try {
    event = JSON.parse(raw);
  } catch {
    return false; // the fast path reports bad input
  }
  if (typeof event !== 'object' || event === null || Array.isArray(event)) return false;
  const o = event as Record<string, unknown>;
  if (typeof o.hook_event_name !== 'string' || !PRE_TOOL_EVENTS.has(o.hook_event_name)) return false;
  if (typeof o.session_id !== 'string' || o.session_id.length === 0) return false;
  const input = o.tool_input;
  const fromInput =
    typeof input === 'object' && input !== null && !Array.isArray(input)
      ? (input as Record<string, unknown>).command
      : undefined;
  return mentionsNothing(fromInput) && mentionsNothing(o.command);
}

/** Absent, or a line or an argv that mentions no recognised program; anything else is not sure. */
function mentionsNothing(value: unknown): boolean {
  if (value === undefined || value === null) return true;
  if (typeof value === 'string') return !mayMention(value);
  if (Array.isArray(value)) return value.every((v) => typeof v === 'string' && !mayMention(v));
  return false;
}
