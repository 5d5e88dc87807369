import * as fs from 'node:fs';
import * as path from 'node:path';
import { findNodeAtLocation, getNodeValue, Node, ParseError, parseTree, printParseErrorCode } from 'jsonc-parser';
import { writeFileAtomic } from '../core/store/atomicWrite';
import type { ConnectableAgent, SettingsScope } from './agents/agent';
import { CliError, EXIT } from './exitCodes';
import { isOurHookCommand } from './installation';

/**
 * Agents' settings files, and the exact edits that add or remove our hook entries. Edits are text splices at the
 * places the JSON tree names, so every byte outside them (key order, indentation, other tools' hooks, spacing
 * this code would never produce itself) stays as it was; removing what an addition inserted gives the old bytes back.
 */

/** The hook events `connect` writes for the agent, in its table's order. */
export function settingsEvents(agent: ConnectableAgent): string[] {
  return [...agent.events.keys()];
}

/** The agent's settings file of `scope` (one it has: scopesOf). */
export function settingsFileOf(
  agent: ConnectableAgent,
  scope: SettingsScope,
  projectRoot: string,
  home: string,
): string {
  const file = agent.settings.files[scope];
  if (file === undefined) throw new Error(`${agent.name} has no ${scope} settings file`);
  return path.join(scope === 'user' ? home : projectRoot, ...file.split('/'));
}

export interface SettingsChange {
  event: string;
  action: 'added' | 'updated' | 'removed';
}

/** What our entries in one settings file look like now: the commands per event. */
export type HookEntries = Map<string, string[]>;

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

interface OurEntry {
  event: string;
  group: number;
  hook: number;
  command: string;
}

/**
 * Our hook entries in the file, in document order; also checks that the parts we would edit have the shape the
 * agent uses.
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
  for (const event of settingsEvents(agent)) {
    const groups = findNodeAtLocation(hooks, [event]);
    if (!groups) continue;
    if (groups.type !== 'array')
      throw new SettingsFileError(
        `${file}: "hooks.${event}" is not a JSON array. ` +
          'Fix it by hand, then run the command again; nothing was changed.',
        EXIT.usage,
      );
    (groups.children ?? []).forEach((group, g) => {
      const list = group.type === 'object' ? findNodeAtLocation(group, ['hooks']) : undefined;
      (list?.type === 'array' ? (list.children ?? []) : []).forEach((hook, h) => {
        const value: unknown = hook.type === 'object' ? getNodeValue(hook) : undefined;
        const command = (value as { command?: unknown } | undefined)?.command;
        if (typeof command === 'string' && isOurHookCommand(command, agent.name))
          ours.push({ event, group: g, hook: h, command });
      });
    });
  }
  return ours;
}

/** Our entries per event (for doctor and for telling where else we are connected). Throws on a malformed file. */
export function ourHookEntries(file: string, text: string | null, agent: ConnectableAgent): HookEntries {
  const entries: HookEntries = new Map();
  for (const e of findOurs(file, parseDoc(file, text), agent))
    entries.set(e.event, [...(entries.get(e.event) ?? []), e.command]);
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

export interface SettingsEdit {
  /** The new text, or null when nothing changes (the file is then left untouched, not rewritten). */
  after: string | null;
  changes: SettingsChange[];
}

/**
 * Our entry for every event, exactly once and with `command`: missing ones are appended as their own group,
 * ours with another command (an older installation) are updated in place, duplicates of ours removed.
 */
export function planConnect(file: string, text: string | null, agent: ConnectableAgent, command: string): SettingsEdit {
  let doc = parseDoc(file, text);
  const changes: SettingsChange[] = [];
  for (const event of settingsEvents(agent)) {
    const mine = findOurs(file, doc, agent).filter((e) => e.event === event);
    // Drop duplicates from the end so earlier indexes stay valid.
    for (const extra of mine.slice(1).reverse()) doc = removeEntry(doc, extra);
    const entry = { type: 'command', command };
    if (mine.length === 0) {
      const hooks = findNodeAtLocation(doc.root, ['hooks']);
      if (!hooks) doc = append(doc, doc.root, { [event]: [{ hooks: [entry] }] }, 'hooks');
      else {
        const groups = findNodeAtLocation(hooks, [event]);
        doc = groups ? append(doc, groups, { hooks: [entry] }) : append(doc, hooks, [{ hooks: [entry] }], event);
      }
      changes.push({ event, action: 'added' });
    } else if (mine[0].command !== command) {
      const at = findNodeAtLocation(doc.root, ['hooks', event, mine[0].group, 'hooks', mine[0].hook, 'command'])!;
      doc = splice(doc, at.offset, at.length, JSON.stringify(command));
      changes.push({ event, action: 'updated' });
    } else if (mine.length > 1) {
      changes.push({ event, action: 'removed' });
    }
  }
  return { after: changes.length ? withFinalNewline(text, doc.text, doc.eol) : null, changes };
}

/** Removes every hook entry of ours (any installation) for the agent's events, and nothing else. */
export function planDisconnect(file: string, text: string | null, agent: ConnectableAgent): SettingsEdit {
  if (text === null) return { after: null, changes: [] };
  let doc = parseDoc(file, text);
  const ours = findOurs(file, doc, agent);
  for (const entry of [...ours].reverse()) doc = removeEntry(doc, entry);
  const changes = [...new Set(ours.map((e) => e.event))].map((event) => ({ event, action: 'removed' as const }));
  return { after: changes.length ? doc.text : null, changes };
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

function writeFailure(file: string, error: unknown): SettingsFileError {
  const code = (error as NodeJS.ErrnoException).code ?? 'error';
  return new SettingsFileError(`${file} could not be written (${code}); nothing was changed.`, EXIT.failed);
}
