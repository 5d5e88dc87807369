import * as path from 'node:path';
import { anchorRef } from '../../core/chats/turnAnchors';
import { CliError, EXIT } from '../exitCodes';
import {
  HookAction,
  HookEvent,
  hookEventTable,
  JsonObject,
  lifecycleAction,
  optionalString,
  parseJsonObject,
  reportedPath,
  shellCommandOf,
  snakeCaseFields,
} from '../hooks/hookEvent';
import { type HookCommands, isOurHookCommand } from '../installation';
import { topLevelContext } from '../hooks/contextChannel';
import type { ConnectableAgent, OurEntry, SettingsEdit, SettingsFormat } from './agent';
import type { ToolWrites } from '../../core/versionHistory';

/**
 * `agent-versions hook opencode`: opencode (verified against 1.18.33, test/agents/opencode.agent.test.ts).
 * opencode has no shell hooks; it loads JavaScript plugins from `.opencode/plugins/` (project) and
 * `$XDG_CONFIG_HOME/opencode/plugins/` (user), in every project, without asking. So `connect opencode` writes a
 * plugin of our own, `agent-versions.js`, that pipes each event that matters to this hook command as JSON, one
 * process per event — prompts and ends one after another, each started at once when none runs (`opencode run` exits
 * without waiting for its plugins: a queued one would be lost), tool reports beside them — (the command is the one
 * every agent's hooks run: fast path, facts file):
 *
 * - `chat.message` (awaited by opencode before it calls the model, so the pre-turn state is captured before any
 *   edit) begins a turn; `session.idle` ends it completed; `session.error` ends it cancelled for
 *   `MessageAbortedError` (Escape twice in the TUI) and errored for anything else (an API error). opencode sends
 *   `session.idle` after an error too (often twice): the turn has ended by then, so it changes nothing. `/exit` and
 *   SIGTERM send nothing: the session's next prompt ends that turn cancelled. The TUI loads the plugin twice; each
 *   event reaches one of the two.
 * - The payload is ours: `{"hook_event_name", "session_id", "cwd" (the plugin's directory), "prompt"?,
 *   "message_id"?, "error_name"?, "tool_name"?, "file_path"?, "command"?, "reads_context"?}`; chats are
 *   `opencode:<sessionID>` (stable across `--continue` and `-s`).
 * - Where a turn sits in the session (issue 32, docs/design/conversation-rollback.md): `chat.message`'s
 *   `output.message.id` is the id opencode stores the prompt under; sent as `message_id`, it is recorded with the
 *   session's id as the turn's anchor (`chat fork`, conversations/opencode.ts). A plugin written before that sends
 *   none: its turns' anchors are unknown; doctor says the plugin is out of date, and `connect opencode` rewrites it.
 * - Context channel: in `chat.message`, a pushed `{type: "text", synthetic: true, text}` part reaches the model as a
 *   second text part of the user's message: the plugin reads `{"additionalContext"}` from the hook's stdout and
 *   says so (`reads_context`); for a plugin written before that, which ignores stdout, a note waits.
 * - Paths a tool wrote: `tool.execute.after` `args.filePath` for `write` and `edit`, and the `file.edited` event's
 *   `file`; `bash` has only `args.command`.
 * - Before a tool runs: `tool.execute.before` for `bash`, its `output.args.command` forwarded as `command` (issue 34:
 *   a checkpoint before a destructive one). opencode 1.18 awaits the plugin's hook before it runs the tool, and the
 *   plugin awaits our hook command: the checkpoint is taken before the command runs.
 */

const WHAT = 'opencode plugin event';

const EVENTS = hookEventTable([
  ['chat.message', 'begin'],
  ['session.idle', 'completed'],
  ['session.error', 'errored'],
  ['tool.execute.after', 'wrote'],
  ['tool.execute.before', 'before-tool'],
]);

/** The first line of the plugin connect writes: what makes the file ours. */
const MARKER = '// agent-versions: ';

export const opencode: ConnectableAgent = {
  name: 'opencode',
  hookHelp: 'opencode (the plugin `connect opencode` writes)',
  events: EVENTS,
  readEvent: async ({ readStdin }) => parseOpencodePayload(await readStdin()),
  toolWrites: opencodeToolWrites,
  context: topLevelContext,
  guard: {
    help: 'our plugin throws in tool.execute.before',
    answer: (reason) => JSON.stringify({ decision: 'deny', reason }),
  },
  settings: {
    displayName: 'opencode',
    files: { project: '.opencode/plugins/agent-versions.js' },
    user: {
      dir: (home, env) => path.join(env.XDG_CONFIG_HOME || path.join(home, '.config'), 'opencode'),
      file: 'plugins/agent-versions.js',
      help: '~/.config/opencode/plugins/agent-versions.js',
    },
    format: pluginFormat(),
  },
};

function parseOpencodePayload(raw: string): HookEvent {
  const o = parseJsonObject(raw, WHAT);
  const { event, session, cwd, prompt } = snakeCaseFields(o, WHAT);
  const aborted = event === 'session.error' && optionalString(o, 'error_name', WHAT) === 'MessageAbortedError';
  const action: HookAction = aborted
    ? { kind: 'end', outcome: 'cancelled' }
    : lifecycleAction(
        event,
        prompt,
        EVENTS,
        () => opencodeToolWrites(o, cwd),
        () => (o.tool_name === 'bash' ? shellCommandOf(o.command) : null),
      );
  if (action.kind === 'begin') {
    // Where the turn sits in the session (issue 32): the session's id and the prompt's message id, as the plugin
    // names them. A plugin written before it names no message: the anchor stays unknown.
    const chatRef = anchorRef(session);
    const turnRef = anchorRef(o.message_id);
    if (chatRef !== undefined && turnRef !== undefined) action.anchor = { chatRef, turnRef };
  }
  return {
    agent: 'opencode',
    event,
    chatId: `opencode:${session}`,
    cwd,
    action,
    // A plugin written before notes ignores the hook's stdout: notes wait until `connect opencode` updates it.
    ...(o.reads_context === true ? {} : { hearsContext: false as const }),
  };
}

/** Our plugin forwards `write`/`edit` with `args.filePath` as `file_path`, and `bash` with no path. */
function opencodeToolWrites(o: JsonObject, cwd: string | undefined): ToolWrites | null {
  if (o.tool_name === 'write' || o.tool_name === 'edit') return { paths: reportedPath(o.file_path, cwd), shell: false };
  return o.tool_name === 'bash' ? { paths: [], shell: true } : null;
}

/**
 * The plugin file for `commands`: plain JavaScript (no dependency), each command as a JSON string on its own line
 * (COMMAND, the lifecycle events' one, is what makes the file ours). Tool events run their `--tool` forms.
 */
export function opencodePlugin(commands: HookCommands): string {
  return `${MARKER}records every opencode turn as a version (Undo and Redo in Agent Version History).
// Written by \`agent-versions connect opencode\`; \`agent-versions disconnect opencode\` removes this file.
import { spawn } from "node:child_process";

const COMMAND = ${JSON.stringify(commands.lifecycle)};
const TOOL_COMMAND = ${JSON.stringify(commands.tool)};
const BEFORE_TOOL_COMMAND = ${JSON.stringify(commands.beforeTool)};

export const AgentVersions = async ({ directory }) => {
  // One run of the hook command; resolves to what it printed (a note for the model after an Undo, on a prompt only).
  const hook = (event, command = COMMAND) =>
    new Promise((resolve) => {
      let out = "";
      const child = spawn(command, { shell: true, cwd: directory, stdio: ["pipe", "pipe", "ignore"] });
      child.stdout.setEncoding("utf8");
      child.stdout.on("data", (chunk) => (out += chunk));
      child.on("error", () => resolve(""));
      child.on("close", () => resolve(out));
      child.stdin.on("error", () => undefined);
      child.stdin.end(JSON.stringify({ ...event, cwd: directory }));
    });
  // Prompts and ends, one at a time in the order opencode sends them (a begin is recorded before the end that
  // follows it). One starts at once when none is running: \`opencode run\` exits without waiting for its plugins, and
  // a hook already started finishes on its own, but one still waiting in a queue would be lost.
  let queue = Promise.resolve("");
  let pending = 0;
  const send = (event) => {
    const start = () => hook(event).finally(() => void pending--);
    queue = pending++ === 0 ? start() : queue.then(start);
    return queue;
  };
  return {
    "chat.message": async (input, output) => {
      const prompt = output.parts
        .filter((part) => part.type === "text" && !part.synthetic)
        .map((part) => part.text)
        .join("\\n");
      // The prompt's message id: where the turn sits in the session (chat fork continues from before it).
      const printed = await send({
        hook_event_name: "chat.message",
        session_id: input.sessionID,
        message_id: output.message?.id,
        prompt,
        reads_context: true,
      });
      let note;
      try {
        note = JSON.parse(printed).additionalContext;
      } catch {
        return;
      }
      if (typeof note !== "string" || note === "") return;
      // The model reads it as a second text part of the user's message (not shown as the user's words).
      output.parts.push({
        id: "prt_avh" + Date.now().toString(36) + Math.random().toString(36).slice(2, 10),
        sessionID: input.sessionID,
        messageID: output.message.id,
        type: "text",
        text: note,
        synthetic: true,
      });
    },
    // The files a tool wrote (docs/design/two-chats.md): started at once, beside the queue, and not awaited, so the
    // tool is not held up and the turn's end is never queued behind it (each report is one appended line).
    "tool.execute.after": async (input) => {
      const tool = input?.tool;
      if (typeof input?.sessionID !== "string") return;
      const event = { hook_event_name: "tool.execute.after", session_id: input.sessionID, tool_name: tool };
      if (tool === "write" || tool === "edit") hook({ ...event, file_path: input.args?.filePath }, TOOL_COMMAND);
      else if (tool === "bash") hook(event, TOOL_COMMAND);
    },
    // Before a shell command runs: awaited (opencode awaits this before it runs the tool), so a checkpoint before a
    // destructive command is taken first; any other command is answered at once by the hook's fast path. With the
    // guard (connect --guard-destructive) the hook prints {"decision":"deny","reason"} for a destructive one: thrown,
    // opencode does not run the tool and the model reads the reason.
    "tool.execute.before": async (input, output) => {
      if (input?.tool !== "bash" || typeof input?.sessionID !== "string") return;
      const command = output?.args?.command;
      if (typeof command !== "string") return;
      const event = { hook_event_name: "tool.execute.before", session_id: input.sessionID, tool_name: "bash", command };
      const printed = await hook(event, BEFORE_TOOL_COMMAND);
      let answer;
      try {
        answer = JSON.parse(printed);
      } catch {
        return;
      }
      if (answer?.decision === "deny" && typeof answer.reason === "string") throw new Error(answer.reason);
    },
    event: async ({ event }) => {
      const sessionID = event.properties?.sessionID;
      if (typeof sessionID !== "string") return;
      if (event.type === "session.idle") await send({ hook_event_name: "session.idle", session_id: sessionID });
      if (event.type === "session.error") {
        const error_name = event.properties.error?.name;
        await send({ hook_event_name: "session.error", session_id: sessionID, error_name });
      }
    },
  };
};
`;
}

/** The plugin as a settings file: ours by its first line; its one command serves every event. */
function pluginFormat(): SettingsFormat {
  const commandOf = (file: string, text: string): string | null => {
    if (!text.startsWith(MARKER)) return null;
    const line = /^const COMMAND = (".*");$/m.exec(text);
    let command: unknown;
    try {
      command = line ? JSON.parse(line[1]) : undefined;
    } catch {
      command = undefined;
    }
    if (typeof command !== 'string') {
      throw new CliError(
        `${file} was written by agent-versions and then changed: it names no hook command. ` +
          'Delete it, then run the command again; nothing was changed.',
        EXIT.usage,
      );
    }
    return command;
  };
  const entries = (file: string, text: string | null, agent: ConnectableAgent): OurEntry[] => {
    const command = text === null ? null : commandOf(file, text);
    if (command === null || !isOurHookCommand(command, agent.name)) return [];
    return [...agent.events.keys()].map((event) => ({ event, group: 0, hook: 0, command, fields: {} }));
  };
  const all = (agent: ConnectableAgent, action: 'added' | 'updated' | 'removed') =>
    [...agent.events.keys()].map((event) => ({ event, action }));
  return {
    entries,
    planConnect(file, text, agent, commands): SettingsEdit {
      const wanted = opencodePlugin(commands);
      if (text === null) return { after: wanted, changes: all(agent, 'added') };
      if (commandOf(file, text) === null) {
        throw new CliError(
          `${file} exists and was not written by agent-versions. Move it away, then run the command again; ` +
            'nothing was changed.',
          EXIT.usage,
        );
      }
      return text === wanted ? { after: null, changes: [] } : { after: wanted, changes: all(agent, 'updated') };
    },
    outdated:
      'the plugin there is out of date (written by an older agent-versions): it may not send what this version ' +
      'uses, such as the prompt’s message id that `chat fork` needs to continue a chat from before a turn.',
    planDisconnect(file, text, agent): SettingsEdit {
      if (entries(file, text, agent).length === 0) return { after: null, changes: [] };
      return { after: '', remove: true, changes: all(agent, 'removed') };
    },
  };
}
