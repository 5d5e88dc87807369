import * as fs from 'node:fs';
import * as path from 'node:path';
import { gitStatus } from '../gitFixtures';
import { prng, Prng } from './prng';
import type { Snapshot } from './snapshot';

/**
 * File edits a user or an agent makes, as data so a failing run prints them and a shorter list can be replayed.
 * Each names concrete paths; one whose path is no longer there when replayed does nothing.
 */
export type Edit =
  | { op: 'write'; path: string; text: number }
  | { op: 'binary'; path: string; bytes: number }
  | { op: 'delete'; path: string }
  | { op: 'rename'; path: string; to: string }
  | { op: 'chmod'; path: string }
  | { op: 'symlink'; path: string; target: string }
  | { op: 'toFolder'; path: string }
  | { op: 'toFile'; path: string }
  | { op: 'ignore'; rule: string; add: boolean }
  | { op: 'stage'; path: string | null };

/** The names edits use: nested folders, names with spaces and non-ASCII letters, paths ignore rules cover. */
export const PATHS = [
  'a.txt',
  'b.txt',
  'src/app.ts',
  'src/lib/util.ts',
  'docs/notes.md',
  'cache/data.bin',
  'build/out.bin',
  'run.log',
  'thing',
  'naïve ✓ 文件.txt',
  'space name.md',
];

/** Rules an edit of .gitignore adds or takes away; each covers some of PATHS. */
export const RULES = ['cache/', '*.log', 'build/', 'out.bin', 'docs/notes.md', '*.bin', 'thing'];

export function textOf(path: string, n: number): string {
  const lines = 1 + (n % 4);
  return Array.from({ length: lines }, (_, i) => `${path} line ${i} v${n}`).join('\n') + (n % 3 === 0 ? '' : '\n');
}

export function bytesOf(n: number): Buffer {
  const r = prng(n);
  return Buffer.from(Array.from({ length: 1 + r.int(48) }, () => (r.chance(0.2) ? 0 : r.int(256))));
}

/** A plausible edit for the tree in `now` (files it holds, or new ones). */
export function drawEdit(r: Prng, now: Snapshot): Edit {
  const files = [...now.keys()].filter((p) => p !== '.gitignore');
  const existing = () => (files.length > 0 ? r.pick(files) : r.pick(PATHS));
  const op = r.weighted<Edit['op']>({
    write: 8,
    binary: 2,
    delete: files.length > 0 ? 2 : 0,
    rename: files.length > 0 ? 2 : 0,
    chmod: files.length > 0 ? 1.5 : 0,
    symlink: 1,
    toFolder: files.length > 0 ? 1 : 0,
    toFile: 1,
    ignore: 1.5,
    stage: 1.5,
  });
  switch (op) {
    case 'write':
      return { op, path: r.chance(0.6) && files.length > 0 ? existing() : r.pick(PATHS), text: r.int(1000) };
    case 'binary':
      return { op, path: r.pick(PATHS), bytes: r.int(1_000_000) };
    case 'delete':
    case 'chmod':
    case 'toFolder':
      return { op, path: existing() };
    case 'rename':
      return { op, path: existing(), to: r.pick(PATHS) };
    case 'symlink':
      return { op, path: r.pick(PATHS), target: r.chance(0.2) ? 'missing-target' : r.pick(PATHS) };
    case 'toFile': {
      const folders = [...new Set(files.filter((f) => f.includes('/')).map((f) => f.split('/')[0]))];
      return { op, path: folders.length > 0 ? r.pick(folders) : 'thing' };
    }
    case 'ignore':
      return { op, rule: r.pick(RULES), add: r.chance(0.6) };
    case 'stage':
      return { op, path: r.chance(0.4) ? null : existing() };
  }
}

function exists(full: string): boolean {
  try {
    fs.lstatSync(full);
    return true;
  } catch {
    return false;
  }
}

/** Makes room for a file at `rel`: a file where a folder of its path must be, or a folder where it goes, is removed. */
function clearFor(repo: string, rel: string): void {
  const parts = rel.split('/');
  for (let i = 1; i < parts.length; i++) {
    const dir = path.join(repo, ...parts.slice(0, i));
    if (exists(dir) && !fs.lstatSync(dir).isDirectory()) fs.rmSync(dir);
  }
  const full = path.join(repo, rel);
  if (exists(full)) fs.rmSync(full, { recursive: true, force: true });
  fs.mkdirSync(path.dirname(full), { recursive: true });
}

/** Applies `e` to the working tree; false when it had nothing to act on (its path is gone). */
export function applyEdit(repo: string, e: Edit): boolean {
  if (e.op === 'ignore') {
    const file = path.join(repo, '.gitignore');
    const lines = exists(file) ? fs.readFileSync(file, 'utf8').split('\n').filter(Boolean) : [];
    const next = e.add ? [...lines.filter((l) => l !== e.rule), e.rule] : lines.filter((l) => l !== e.rule);
    if (exists(file) && !fs.lstatSync(file).isFile()) fs.rmSync(file, { recursive: true });
    fs.writeFileSync(file, next.map((l) => `${l}\n`).join(''));
    return true;
  }
  if (e.op === 'stage') {
    // Staging an ignored path fails in git; that is the user's git, not ours.
    gitStatus(repo, 'add', ...(e.path === null ? ['-A'] : ['--', e.path]));
    return true;
  }
  const full = path.join(repo, e.path);
  switch (e.op) {
    case 'write': {
      const wasFile = exists(full) && fs.lstatSync(full).isFile();
      if (!wasFile) clearFor(repo, e.path);
      fs.writeFileSync(full, textOf(e.path, e.text));
      return true;
    }
    case 'binary':
      clearFor(repo, e.path);
      fs.writeFileSync(full, bytesOf(e.bytes));
      return true;
    case 'symlink':
      if (e.target === e.path) return false;
      clearFor(repo, e.path);
      fs.symlinkSync(e.target, full);
      return true;
    default:
      break;
  }
  if (!exists(full)) return false;
  const st = fs.lstatSync(full);
  switch (e.op) {
    case 'delete':
      fs.rmSync(full, { recursive: true, force: true });
      return true;
    case 'rename': {
      if (e.to === e.path || e.to.startsWith(`${e.path}/`) || e.path.startsWith(`${e.to}/`)) return false;
      const data = st.isSymbolicLink() ? null : st.isFile() ? fs.readFileSync(full) : undefined;
      if (data === undefined) return false;
      const target = st.isSymbolicLink() ? fs.readlinkSync(full) : '';
      const mode = st.mode;
      fs.rmSync(full);
      clearFor(repo, e.to);
      if (data === null) fs.symlinkSync(target, path.join(repo, e.to));
      else fs.writeFileSync(path.join(repo, e.to), data, { mode: mode & 0o777 });
      return true;
    }
    case 'chmod':
      if (!st.isFile()) return false;
      fs.chmodSync(full, (st.mode & 0o777) ^ 0o111);
      return true;
    case 'toFolder':
      if (st.isDirectory()) return false;
      fs.rmSync(full);
      fs.mkdirSync(full);
      fs.writeFileSync(path.join(full, 'inner.txt'), `${e.path} became a folder\n`);
      return true;
    case 'toFile':
      if (!st.isDirectory()) return false;
      fs.rmSync(full, { recursive: true, force: true });
      fs.writeFileSync(full, `${e.path} became a file\n`);
      return true;
  }
}

export function describeEdit(e: Edit): string {
  switch (e.op) {
    case 'write':
      return `write ${JSON.stringify(e.path)} (text ${e.text})`;
    case 'binary':
      return `write binary ${JSON.stringify(e.path)} (bytes ${e.bytes})`;
    case 'rename':
      return `rename ${JSON.stringify(e.path)} → ${JSON.stringify(e.to)}`;
    case 'symlink':
      return `symlink ${JSON.stringify(e.path)} → ${JSON.stringify(e.target)}`;
    case 'ignore':
      return `${e.add ? 'add' : 'remove'} .gitignore rule ${JSON.stringify(e.rule)}`;
    case 'stage':
      return `git add ${e.path === null ? '-A' : JSON.stringify(e.path)}`;
    default:
      return `${e.op} ${JSON.stringify(e.path)}`;
  }
}
