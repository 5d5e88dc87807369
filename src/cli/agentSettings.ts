import * as fs from 'node:fs';
import * as path from 'node:path';
import { findNodeAtLocation, getNodeValue, Node, ParseError, parseTree, printParseErrorCode } from 'jsonc-parser';
import { writeFileAtomic } from '../core/store/atomicWrite';
import type {
  ConnectableAgent,
  HookEntries,
  OurEntry,
  SettingsChange,
  SettingsEdit,
  SettingsScope,
} from './agents/agent';
import { CliError, EXIT } from './exitCodes';
import type { EventEffect } from './hooks/hookEvent';
import { type HookCommands, isOurHookCommand } from './installation';

export type { HookEntries, SettingsChange, SettingsEdit } from './agents/agent';

/**
 * Agents' settings files, and the exact edits that add or remove our hook entries. Edits are text splices at the
 * places the JSON tree names, so every byte outside them (key order, indentation, other tools' hooks, spacing
 * this code would never produce itself) stays as it was; removing what an addition inserted gives the old bytes back.
 * An agent whose file is not the JSON hooks layout (opencode's plugin) brings its own format (AgentSettings.format).
 */

/** The hook events `connect` writes for the agent, in its table's order. */
export function settingsEvents(agent: ConnectableAgent): string[] {
  return [...agent.events.keys()];
}

/** The agent's settings file of `scope` (one it has: scopesOf); the user scope's folder may come from `env`. */
export function settingsFileOf(
  agent: ConnectableAgent,
  scope: SettingsScope,
  projectRoot: string,
  home: string,
  env: NodeJS.ProcessEnv = process.env,
): string {
  if (scope === 'user') {
    const user = agent.settings.user;
    if (user === undefined) throw new Error(`${agent.name} has no user settings file`);
    return path.join(user.dir(home, env), ...user.file.split('/'));
  }
  const file = agent.settings.files[scope];
  if (file === undefined) throw new Error(`${agent.name} has no ${scope} settings file`);
  return path.join(projectRoot, ...file.split('/'));
}

/** A settings file we cannot edit safely: nothing was written. */
export class SettingsFileError extends CliError {}

/**
 * Reads a settings file; null when it does not exist. Never returns or prints its content in errors (it may hold
 * tokens).
 */
export function readSettings(file: string): string | null {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return null;
    throw new SettingsFileError(`${file} could not be read (${code ?? 'error'}); nothing was changed.`, EXIT.failed);
  }
}

interface Doc {
  text: string;
  root: Node;
  eol: string;
  unit: string;
}

function parseDoc(file: string, text: string | null): Doc {
  const source = text === null || text.trim() === '' ? '{}' : text;
  const errors: ParseError[] = [];
  const root = parseTree(source, errors, { disallowComments: true, allowTrailingComma: false });
  if (errors.length > 0 || !root) {
    const at = errors[0]?.offset ?? 0;
    const before = source.slice(0, at).split('\n');
    throw new SettingsFileError(
      `${file} is not valid JSON (line ${before.length}, column ${before[before.length - 1].length + 1}: ` +
        `${errors[0] ? printParseErrorCode(errors[0].error) : 'empty'}). ` +
        'Fix it by hand, then run the command again; nothing was changed.',
      EXIT.usage,
    );
  }
  if (root.type !== 'object')
    throw new SettingsFileError(`${file} must hold a JSON object; nothing was changed.`, EXIT.usage);
  return { text: source, root, eol: source.includes('\r\n') ? '\r\n' : '\n', unit: indentUnit(source) };
}

/**
 * The file's own indentation step: the first indented line's leading whitespace (tabs stay tabs); 2 spaces when
 * none.
 */
function indentUnit(text: string): string {
  const m = /\n([ \t]+)\S/.exec(text);
  return m ? m[1] : '  ';
}

function lineIndent(text: string, offset: number): string {
  const start = text.lastIndexOf('\n', offset - 1) + 1;
  return /^[ \t]*/.exec(text.slice(start))![0];
}

function render(doc: Doc, value: unknown, indent: string): string {
  return JSON.stringify(value, null, doc.unit).split('\n').join(`${doc.eol}${indent}`);
}

function splice(doc: Doc, offset: number, length: number, insert: string): Doc {
  const text = doc.text.slice(0, offset) + insert + doc.text.slice(offset + length);
  return { ...doc, text, root: parseTree(text)! };
}

/** Appends a property (object) or an element (array) after the container's last child, in the file's style. */
function append(doc: Doc, container: Node, value: unknown, key?: string): Doc {
  const children = container.children ?? [];
  const item = (indent: string) =>
    `${key === undefined ? '' : `${JSON.stringify(key)}: `}${render(doc, value, indent)}`;
  if (children.length === 0) {
    const outer = lineIndent(doc.text, container.offset);
    const inner = outer + doc.unit;
    return splice(
      doc,
      container.offset + 1,
      container.length - 2,
      `${doc.eol}${inner}${item(inner)}${doc.eol}${outer}`,
    );
  }
  const last = children[children.length - 1];
  const end = last.offset + last.length;
  // A container written on one line (`[{ … }]`) gets the new item on that line too.
  if (!doc.text.slice(container.offset, last.offset).includes('\n')) {
    return splice(doc, end, 0, `, ${key === undefined ? '' : `${JSON.stringify(key)}: `}${JSON.stringify(value)}`);
  }
  const indent = lineIndent(doc.text, last.offset);
  return splice(doc, end, 0, `,${doc.eol}${indent}${item(indent)}`);
}

/** Removes one child (a property node or an array element) with the separator that belongs to it. */
function removeChild(doc: Doc, container: Node, index: number): Doc {
  const children = container.children!;
  if (children.length === 1) return splice(doc, container.offset + 1, container.length - 2, '');
  const node = children[index];
  if (index > 0) {
    const previous = children[index - 1];
    return splice(
      doc,
      previous.offset + previous.length,
      node.offset + node.length - (previous.offset + previous.length),
      '',
    );
  }
  return splice(doc, node.offset, children[1].offset - node.offset, '');
}

function propertyNode(object: Node, key: string): Node | undefined {
  return object.children?.find((p) => p.children?.[0]?.value === key);
}

/**
 * Our hook entries in the file, in document order, under every event (an event the agent's table no longer lists,
 * such as the StopFailure an older `connect codex` wrote, included); also checks that the parts we would edit have
 * the shape the agent uses.
 */
function findOurs(file: string, doc: Doc, agent: ConnectableAgent): OurEntry[] {
  const hooks = findNodeAtLocation(doc.root, ['hooks']);
  if (!hooks) return [];
  if (hooks.type !== 'object')
    throw new SettingsFileError(
      `${file}: "hooks" is not a JSON object. Fix it by hand, then run the command again; nothing was changed.`,
      EXIT.usage,
    );
  const ours: OurEntry[] = [];
  for (const property of hooks.children ?? []) {
    const event = property.children?.[0]?.value as string;
    const groups = property.children?.[1];
    if (!groups) continue;
    if (groups.type !== 'array') {
      if (!agent.events.has(event)) continue; // not an event we write: not ours to judge
      throw new SettingsFileError(
        `${file}: "hooks.${event}" is not a JSON array. ` +
          'Fix it by hand, then run the command again; nothing was changed.',
        EXIT.usage,
      );
    }
    (groups.children ?? []).forEach((group, g) => {
      const list = group.type === 'object' ? findNodeAtLocation(group, ['hooks']) : undefined;
      (list?.type === 'array' ? (list.children ?? []) : []).forEach((hook, h) => {
        const value: unknown = hook.type === 'object' ? getNodeValue(hook) : undefined;
        const fields = (value ?? {}) as Record<string, unknown>;
        const command = fields.command;
        if (typeof command === 'string' && isOurHookCommand(command, agent.name))
          ours.push({ event, group: g, hook: h, command, fields });
      });
    });
  }
  return ours;
}

/** Our entries in a settings file, in document order, whatever its format. Throws on a malformed file. */
export function ourEntries(file: string, text: string | null, agent: ConnectableAgent): OurEntry[] {
  const format = agent.settings.format;
  return format ? format.entries(file, text, agent) : findOurs(file, parseDoc(file, text), agent);
}

/** Our entries per event (for doctor and for telling where else we are connected). Throws on a malformed file. */
export function ourHookEntries(file: string, text: string | null, agent: ConnectableAgent): HookEntries {
  const entries: HookEntries = new Map();
  for (const e of ourEntries(file, text, agent)) entries.set(e.event, [...(entries.get(e.event) ?? []), e.command]);
  return entries;
}

/** Removes one of our hook entries, and each container our removal leaves empty (its group, the event, `hooks`). */
function removeEntry(doc: Doc, entry: OurEntry): Doc {
  const hooks = findNodeAtLocation(doc.root, ['hooks'])!;
  const groups = findNodeAtLocation(hooks, [entry.event])!;
  const group = groups.children![entry.group];
  const list = findNodeAtLocation(group, ['hooks'])!;
  if (list.children!.length > 1) return removeChild(doc, list, entry.hook);
  // Our hook was the group's only one; the group goes if "hooks" is all it holds (else only our hook goes).
  if ((group.children ?? []).length > 1) return removeChild(doc, list, entry.hook);
  if (groups.children!.length > 1) return removeChild(doc, groups, entry.group);
  const eventIndex = hooks.children!.indexOf(propertyNode(hooks, entry.event)!);
  if (hooks.children!.length > 1) return removeChild(doc, hooks, eventIndex);
  return removeChild(doc, doc.root, doc.root.children!.indexOf(propertyNode(doc.root, 'hooks')!));
}

/** The command of an event's entry: a tool event's carries `--tool` (and the pre-tool one the guard's flag). */
export function commandOfEvent(commands: HookCommands, effect: EventEffect | undefined): string {
  return effect === 'wrote' ? commands.tool : effect === 'before-tool' ? commands.beforeTool : commands.lifecycle;
}

/** The fields our entry for `event` has: `type`, `command`, then what the agent asks for (a timeout, a name). */
function entryOf(agent: ConnectableAgent, event: string, command: string): Record<string, string | number> {
  return { type: 'command', command, ...(agent.settings.entryFields?.(event) ?? {}) };
}

/** Brings one entry of ours to `wanted`: each field it lacks is appended, each that differs replaced in place. */
function updateEntry(doc: Doc, entry: OurEntry, wanted: Record<string, string | number>): Doc {
  let next = doc;
  for (const [key, value] of Object.entries(wanted)) {
    if (entry.fields[key] === value) continue;
    const at = ['hooks', entry.event, entry.group, 'hooks', entry.hook];
    const existing = findNodeAtLocation(next.root, [...at, key]);
    next = existing
      ? splice(next, existing.offset, existing.length, JSON.stringify(value))
      : append(next, findNodeAtLocation(next.root, at)!, value, key);
  }
  return next;
}

/**
 * Our entry for every event, exactly once and as the agent needs it: missing ones are appended as their own group,
 * ours with another command (an older installation) or other fields are updated in place, duplicates of ours and
 * ours under events the agent no longer has removed.
 */
export function planConnect(
  file: string,
  text: string | null,
  agent: ConnectableAgent,
  commands: HookCommands,
): SettingsEdit {
  const format = agent.settings.format;
  if (format) return format.planConnect(file, text, agent, commands);
  const fresh = text === null || text.trim() === '';
  let doc = parseDoc(file, fresh ? (agent.settings.newFile ?? null) : text);
  const changes: SettingsChange[] = [];
  // Ours under events the table does not list, from the end so earlier indexes stay valid.
  const stale = findOurs(file, doc, agent).filter((e) => !agent.events.has(e.event));
  for (const entry of [...stale].reverse()) doc = removeEntry(doc, entry);
  for (const event of new Set(stale.map((e) => e.event))) changes.push({ event, action: 'removed' });
  for (const event of settingsEvents(agent)) {
    const mine = findOurs(file, doc, agent).filter((e) => e.event === event);
    // Drop duplicates from the end so earlier indexes stay valid.
    for (const extra of mine.slice(1).reverse()) doc = removeEntry(doc, extra);
    const entry = entryOf(agent, event, commandOfEvent(commands, agent.events.get(event)));
    if (mine.length === 0) {
      const hooks = findNodeAtLocation(doc.root, ['hooks']);
      if (!hooks) doc = append(doc, doc.root, { [event]: [{ hooks: [entry] }] }, 'hooks');
      else {
        const groups = findNodeAtLocation(hooks, [event]);
        doc = groups ? append(doc, groups, { hooks: [entry] }) : append(doc, hooks, [{ hooks: [entry] }], event);
      }
      changes.push({ event, action: 'added' });
    } else if (Object.entries(entry).some(([key, value]) => mine[0].fields[key] !== value)) {
      doc = updateEntry(doc, mine[0], entry);
      changes.push({ event, action: 'updated' });
    } else if (mine.length > 1) {
      changes.push({ event, action: 'removed' });
    }
  }
  return { after: changes.length ? withFinalNewline(fresh ? null : text, doc.text, doc.eol) : null, changes };
}

/**
 * Removes every hook entry of ours (any installation) for any event, and nothing else; a file of our own that is
 * left with nothing but what connect started it from goes.
 */
export function planDisconnect(file: string, text: string | null, agent: ConnectableAgent): SettingsEdit {
  const format = agent.settings.format;
  if (format) return format.planDisconnect(file, text, agent);
  if (text === null) return { after: null, changes: [] };
  let doc = parseDoc(file, text);
  const ours = findOurs(file, doc, agent);
  for (const entry of [...ours].reverse()) doc = removeEntry(doc, entry);
  // In the table's order, then any other event of ours.
  const events = new Set(ours.map((e) => e.event));
  const ordered = [
    ...settingsEvents(agent).filter((e) => events.has(e)),
    ...[...events].filter((e) => !agent.events.has(e)),
  ];
  const changes = ordered.map((event) => ({ event, action: 'removed' as const }));
  if (changes.length === 0) return { after: null, changes };
  const empty = (t: string) => JSON.stringify(JSON.parse(t));
  const leftover = empty(doc.text);
  if (agent.settings.ownFile && (leftover === '{}' || leftover === empty(agent.settings.newFile ?? '{}')))
    return { after: doc.text, remove: true, changes };
  return { after: doc.text, changes };
}

/** A file we create ends with a newline, like editors write them; an existing file keeps its own ending. */
function withFinalNewline(original: string | null, text: string, eol: string): string {
  return original === null || original.trim() === '' ? `${text}${eol}` : text;
}

/**
 * Writes a settings file atomically (temp + fsync + rename + directory fsync), through a symlink to its target
 * (dotfile managers link these files), keeping its permissions. A file marked read-only is refused, even for root.
 */
export function writeSettings(file: string, text: string): void {
  const { target, mode } = writableTarget(file);
  try {
    fs.mkdirSync(path.dirname(target), { recursive: true });
    writeFileAtomic(target, text);
    fs.chmodSync(target, mode);
  } catch (error) {
    throw writeFailure(file, error);
  }
}

/**
 * The file a settings write lands in (a symlink's target) and the mode it keeps; refuses a file marked read-only
 * (even for root, who could write it) before anything is written.
 */
export function writableTarget(file: string): { target: string; mode: number } {
  try {
    const target = fs.realpathSync(file);
    const mode = fs.statSync(target).mode & 0o7777;
    if ((mode & 0o222) === 0) {
      throw new SettingsFileError(
        `${file} is read-only; make it writable (chmod u+w) and run the command again; nothing was changed.`,
        EXIT.failed,
      );
    }
    return { target, mode };
  } catch (error) {
    if (error instanceof SettingsFileError) throw error;
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw writeFailure(file, error);
    return { target: file, mode: 0o644 };
  }
}

/**
 * Applies an edit: writes its text, or deletes a file of our own that the edit empties — unless the file is a
 * symlink (a dotfile manager's): then the emptied text is written through it, like any other edit.
 */
export function applySettingsEdit(file: string, edit: SettingsEdit): void {
  if (edit.after === null) return;
  let link = false;
  try {
    link = fs.lstatSync(file).isSymbolicLink();
  } catch {
    // gone already: nothing to delete
  }
  if (!edit.remove || link) return writeSettings(file, edit.after);
  try {
    fs.rmSync(file, { force: true });
  } catch (error) {
    throw writeFailure(file, error);
  }
}

function writeFailure(file: string, error: unknown): SettingsFileError {
  const code = (error as NodeJS.ErrnoException).code ?? 'error';
  return new SettingsFileError(`${file} could not be written (${code}); nothing was changed.`, EXIT.failed);
}
