import { anchorRef } from '../../core/chats/turnAnchors';
import { nodeCrypto } from '../../core/sha256';
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  HookEvent,
  hookEventTable,
  JsonObject,
  lifecycleAction,
  objectField,
  optionalString,
  parseJsonObject,
  shellCommandOf,
  reportedPath,
  requiredString,
  snakeCaseFields,
} from '../hooks/hookEvent';
import type { TerminalOutcome } from '../../core/outcomes';
import { hookSpecificContext } from '../hooks/contextChannel';
import { preToolUseDeny } from '../hooks/guardAnswers';
import type { ConnectableAgent, OurEntry, ReviewContext, ReviewFinding } from './agent';
import type { ToolWrites } from '../../core/versionHistory';

/**
 * `agent-versions hook codex`: OpenAI Codex CLI (verified against 0.171.0, test/agents/codex.agent.test.ts).
 *
 * - Hooks: `$CODEX_HOME/hooks.json` (user; `~/.codex` without the variable) and, in a project Codex trusts,
 *   `<repo>/.codex/hooks.json` — Claude Code's layout, so connect's byte-preserving edits apply; config.toml is
 *   never edited. JSON on stdin with `hook_event_name`, `session_id`, `turn_id`, `cwd`, `transcript_path`.
 *   Codex 0.171's events: SessionStart, UserPromptSubmit, PreModelRequest, PostModelRequest, PreToolUse,
 *   PermissionRequest, PostToolUse, PreCompact, PostCompact, SubagentStart, SubagentStop, Stop, Interrupt,
 *   SessionEnd (no StopFailure: an entry for it is dropped without a word).
 * - UserPromptSubmit begins a turn, Stop ends it completed, Interrupt (Esc or Ctrl+C in the TUI, SIGINT to
 *   `codex exec`) cancelled; SessionEnd ends a turn still running at exit: errored when the session's transcript
 *   says its last turn failed (an API error sends no other sign: no Stop, no Interrupt, only a PostModelRequest
 *   `failed` per attempt), else cancelled. The transcript is written before SessionEnd's hooks run (verified).
 *   An API error in the TUI sends no SessionEnd until the user quits; the next prompt ends that turn cancelled.
 * - Review: Codex runs a hook only once the user has reviewed it in Codex; it keeps the review in
 *   `$CODEX_HOME/config.toml` as `[hooks.state."<hooks file>:<event_snake>:<group>:<handler>"] trusted_hash`, the
 *   sha256 of the hook's normalized identity, so any change to the command makes it "modified" and skipped again —
 *   silently. connect says what to do; doctor compares the hashes (codexReview), read-only: the review stays
 *   Codex's own (`--dangerously-bypass-hook-trust` is Codex's switch for automation).
 * - `notify` (config.toml `notify = [...]`): Codex appends one JSON argument, `{"type": "agent-turn-complete",
 *   "thread-id", "turn-id", "cwd", …}`; it ends the thread's running turn completed and is otherwise ignored.
 * - Context channel: UserPromptSubmit stdout, plain or `{"hookSpecificOutput": {"hookEventName":
 *   "UserPromptSubmit", "additionalContext": …}}`, becomes a `developer` message right after the prompt (kept in a
 *   resumed session's history); SessionStart's additionalContext lands before the prompt.
 * - Paths a tool wrote: PostToolUse `tool_name: "apply_patch"`, `tool_input.command` = the patch text, the paths in
 *   its `*** Add File: / *** Update File: / *** Delete File: / *** Move to:` lines, relative to the turn's cwd;
 *   `exec_command` arrives as `tool_name: "Bash"` with `tool_input.command` only.
 */

const WHAT = 'Codex hook event';
const NOTIFY = 'Codex notification';

const EVENTS = hookEventTable([
  ['UserPromptSubmit', 'begin'],
  ['Stop', 'completed'],
  ['Interrupt', 'cancelled'],
  ['SessionEnd', 'cancelled'],
  ['PostToolUse', 'wrote'],
  ['PreToolUse', 'before-tool'],
]);

/**
 * Seconds our Interrupt and SessionEnd hooks may run. For these two events Codex 0.171 defaults to 1 s — less than
 * one full-path hook run on a loaded machine — and caps any longer timeout at 3 s (the timeout its review hashes for
 * them: 1 without one, 3 for 10; verified); the other events default to 600 s.
 */
const END_EVENT_TIMEOUT_S = 3;
const CODEX_SHORT_DEFAULT = new Set(['Interrupt', 'SessionEnd']);

export const codex: ConnectableAgent = {
  name: 'codex',
  hookHelp: 'codex (its hooks; or its `notify` JSON given as <payload>)',
  events: EVENTS,
  readEvent: async ({ readStdin, payload }) =>
    payload !== undefined ? parseCodexNotification(payload) : parseCodexPayload(await readStdin()),
  toolWrites: codexToolWrites,
  context: hookSpecificContext,
  guard: preToolUseDeny,
  settings: {
    displayName: 'Codex',
    files: { project: '.codex/hooks.json' },
    user: { dir: codexHome, file: 'hooks.json', help: '$CODEX_HOME/hooks.json (~/.codex/hooks.json)' },
    entryFields: (event): Record<string, number> =>
      CODEX_SHORT_DEFAULT.has(event) ? { timeout: END_EVENT_TIMEOUT_S } : {},
    userSteps: (scope) => [
      ...(scope === 'project'
        ? [
            'Codex reads a project’s hooks only in a trusted project: accept Codex’s trust prompt in this folder, ' +
              'or run `codex exec --trust` here once.',
          ]
        : []),
      'Codex runs a hook only after you review it: start `codex` here and choose “Trust all and continue” on ' +
        '“Hooks need review” (or /hooks, then t). Again after any change to the hook command (connecting again ' +
        'from another installation, or with --init, changes it).',
    ],
    review: codexReview,
  },
};

function codexHome(home: string, env: NodeJS.ProcessEnv): string {
  return env.CODEX_HOME || path.join(home, '.codex');
}

function parseCodexPayload(raw: string): HookEvent {
  const o = parseJsonObject(raw, WHAT);
  const { event, session, cwd, prompt } = snakeCaseFields(o, WHAT);
  const action = lifecycleAction(
    event,
    prompt,
    EVENTS,
    () => codexToolWrites(o, cwd),
    () => (SHELL_TOOLS.has(o.tool_name as string) ? shellCommandOf(objectField(o, 'tool_input').command) : null),
  );
  if (action.kind === 'begin') {
    // Where the turn sits in the thread (issue 32): the thread's id and the turn's, as the payload names them.
    const chatRef = anchorRef(session);
    const turnRef = anchorRef(o.turn_id);
    if (chatRef !== undefined && turnRef !== undefined) action.anchor = { chatRef, turnRef };
  }
  return {
    agent: 'codex',
    event,
    chatId: chatOf(session),
    cwd,
    action: event === 'SessionEnd' ? { kind: 'end', outcome: sessionEndOutcome(o) } : action,
  };
}

/** The file lines of an apply_patch patch: `*** Add File: <path>` and its Update, Delete and Move to kin. */
const PATCH_FILE_LINE = /^\*\*\* (?:Add File|Update File|Delete File|Move to): (.+)$/gm;

/**
 * apply_patch names its files in the patch text (`tool_input.command`), relative to the turn's cwd; exec_command
 * arrives as `Bash` (and an unified exec as `exec_command`/`shell`) with no paths.
 */
function codexToolWrites(o: JsonObject, cwd: string | undefined): ToolWrites | null {
  const input = objectField(o, 'tool_input');
  if (o.tool_name === 'apply_patch') {
    const patch =
      typeof input.command === 'string' ? input.command : typeof input.input === 'string' ? input.input : '';
    const paths = [...patch.matchAll(PATCH_FILE_LINE)].flatMap((m) => reportedPath(m[1].trim(), cwd));
    return { paths, shell: false };
  }
  if (SHELL_TOOLS.has(o.tool_name as string)) return { paths: [], shell: true };
  return null;
}

/** The tool names a shell command arrives under (PreToolUse and PostToolUse). */
const SHELL_TOOLS: ReadonlySet<unknown> = new Set(['Bash', 'exec_command', 'shell']);

/** How much of a transcript's end is read for its last turn's outcome (one turn's closing records fit). */
const TRANSCRIPT_TAIL_BYTES = 256 * 1024;

/**
 * The outcome of a turn still running at SessionEnd, from the session's transcript (`transcript_path`, a JSON
 * lines file Codex writes): the last turn record is `task_complete` with an `error` (errored: an API error, after
 * Codex's own retries), `turn_aborted`, or none (cancelled). Anything unreadable counts as cancelled; only the
 * record's type and whether it has an error are looked at, never its text.
 */
function sessionEndOutcome(o: JsonObject): TerminalOutcome {
  const transcript = optionalString(o, 'transcript_path', WHAT);
  if (transcript === undefined || !path.isAbsolute(transcript) || !transcript.endsWith('.jsonl')) return 'cancelled';
  let tail: string;
  try {
    const fd = fs.openSync(transcript, 'r');
    try {
      const size = fs.fstatSync(fd).size;
      const length = Math.min(size, TRANSCRIPT_TAIL_BYTES);
      const buffer = Buffer.alloc(length);
      fs.readSync(fd, buffer, 0, length, size - length);
      tail = buffer.toString('utf8');
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    return 'cancelled';
  }
  const lines = tail.split('\n');
  for (let i = lines.length - 1; i >= 0; i--) {
    if (!/"type":"(task_complete|turn_aborted|task_started)"/.test(lines[i])) continue;
    try {
      const record = JSON.parse(lines[i]) as { type?: unknown; payload?: { type?: unknown; error?: unknown } };
      if (record.type !== 'event_msg') continue;
      const kind = record.payload?.type;
      return kind === 'task_complete' && record.payload?.error != null ? 'errored' : 'cancelled';
    } catch {
      continue; // the first line of the tail may be cut
    }
  }
  return 'cancelled';
}

/** The JSON argument `notify` passes. Only `agent-turn-complete` acts; other types are ignored. */
function parseCodexNotification(raw: string): HookEvent {
  const o = parseJsonObject(raw, NOTIFY);
  const type = requiredString(o, 'type', NOTIFY);
  const thread = requiredString(o, 'thread-id', NOTIFY);
  const cwd = optionalString(o, 'cwd', NOTIFY);
  return {
    agent: 'codex',
    event: type,
    chatId: chatOf(thread),
    cwd,
    action: type === 'agent-turn-complete' ? { kind: 'end', outcome: 'completed' } : { kind: 'ignore' },
  };
}

function chatOf(session: string): string {
  return `codex:${session}`;
}

/** `UserPromptSubmit` → `user_prompt_submit`: the event's label in Codex's review keys and hashes. */
export function codexEventLabel(event: string): string {
  return event.replace(/([a-z])([A-Z])/g, '$1_$2').toLowerCase();
}

/** The timeout (seconds) Codex runs a hook of `event` with, part of its reviewed identity. */
function codexTimeout(event: string, timeout: number | undefined): number {
  return CODEX_SHORT_DEFAULT.has(event) ? Math.min(timeout ?? 1, END_EVENT_TIMEOUT_S) : (timeout ?? 600);
}

/**
 * The `trusted_hash` Codex 0.171 stores when the user reviews a command hook: sha256 of the canonical JSON (keys
 * sorted, no spaces) of its normalized identity — the event's label and one group holding the handler, its timeout
 * as Codex runs it (codexTimeout) and `async` false (our events take no matcher). Verified
 * against the hashes the real TUI wrote
 * (test/agents/codex.agent.test.ts). Compared, never written.
 */
export function codexTrustHash(event: string, command: string, timeout?: number): string {
  const identity = {
    event_name: codexEventLabel(event),
    hooks: [{ async: false, command, timeout: codexTimeout(event, timeout), type: 'command' }],
  };
  return `sha256:${nodeCrypto().createHash('sha256').update(JSON.stringify(identity)).digest('hex')}`;
}

type HookReview = 'trusted' | 'modified' | 'not-reviewed' | 'disabled';

/** One of our entries as Codex's review state has it. */
function reviewOf(file: string, entry: OurEntry, states: Record<string, unknown>): HookReview {
  const key = `${file}:${codexEventLabel(entry.event)}:${entry.group}:${entry.hook}`;
  const state = states[key] as { trusted_hash?: unknown; enabled?: unknown } | undefined;
  if (state === undefined || typeof state !== 'object' || state === null) return 'not-reviewed';
  if (state.enabled === false) return 'disabled';
  if (typeof state.trusted_hash !== 'string') return 'not-reviewed';
  const timeout = typeof entry.fields.timeout === 'number' ? entry.fields.timeout : undefined;
  return state.trusted_hash === codexTrustHash(entry.event, entry.command, timeout) ? 'trusted' : 'modified';
}

/**
 * Whether Codex will run our hooks in `context.file`: the project trusted (project hooks only), and every entry
 * reviewed with the command it has now. Read-only, from `$CODEX_HOME/config.toml`.
 */
async function codexReview(context: ReviewContext): Promise<ReviewFinding | null> {
  const home = codexHome(context.home, context.env);
  const configFile = path.join(home, 'config.toml');
  let config: Record<string, unknown> | null;
  try {
    config = context.readToml(configFile);
  } catch {
    return {
      status: 'warning',
      summary: `Codex's ${configFile} could not be read as TOML, so whether Codex runs these hooks is unknown.`,
      fix: 'Run `codex` once; it reports what is wrong with its configuration.',
      facts: { codexConfig: configFile },
    };
  }
  const facts: Record<string, unknown> = { codexConfig: configFile };
  if (context.scope === 'project' && context.projectRoot !== null) {
    const projects = (config?.projects ?? {}) as Record<string, { trust_level?: unknown } | undefined>;
    const root = context.projectRoot;
    const trusted = Object.entries(projects).some(
      ([folder, p]) =>
        p?.trust_level === 'trusted' && (root === folder || root.startsWith(`${folder.replace(/\/+$/, '')}/`)),
    );
    facts.projectTrusted = trusted;
    if (!trusted) {
      return {
        status: 'problem',
        summary: `Codex does not trust ${root}, so it never reads ${context.file} (and says nothing about it).`,
        fix: 'Run `codex exec --trust` in the project once (or accept Codex’s trust prompt), then review the hooks.',
        facts,
      };
    }
  }
  const hooks = (config?.hooks ?? {}) as { state?: Record<string, unknown> };
  const states = hooks.state ?? {};
  const reviews = context.entries.map((e) => ({ event: e.event, review: reviewOf(context.file, e, states) }));
  facts.hooks = reviews;
  const pending = reviews.filter((r) => r.review !== 'trusted');
  if (pending.length === 0) return { status: 'ok', summary: 'every hook is reviewed in Codex', facts };
  const by = (what: HookReview) => pending.filter((r) => r.review === what).map((r) => r.event);
  const parts = [
    by('not-reviewed').length > 0 ? `not reviewed yet: ${by('not-reviewed').join(', ')}` : '',
    by('modified').length > 0 ? `changed since you reviewed them: ${by('modified').join(', ')}` : '',
    by('disabled').length > 0 ? `turned off in Codex: ${by('disabled').join(', ')}` : '',
  ].filter(Boolean);
  return {
    status: 'problem',
    summary: `Codex skips these hooks, silently (${parts.join('; ')}).`,
    fix:
      'Start `codex` in the project and choose “Trust all and continue” on “Hooks need review” ' +
      '(or /hooks, then t; a hook turned off there: turn it on).',
    facts,
  };
}
