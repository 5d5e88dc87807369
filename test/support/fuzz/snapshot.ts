import * as fs from 'node:fs';
import * as path from 'node:path';
import { blobOid, git } from '../gitFixtures';

/** One path of the working tree: a file (its blob id and exec bit) or a symlink (its target's blob id). */
export interface Entry {
  kind: 'file' | 'link';
  oid: string;
  exec: boolean;
  /** Untracked and matched by an ignore rule when the snapshot was taken. */
  ignored: boolean;
}

/** The working tree (`.git` left out, empty folders too, as git sees them): repo-relative path → entry. */
export type Snapshot = Map<string, Entry>;

export function snapshot(repo: string): Snapshot {
  const out: Snapshot = new Map();
  const walk = (dir: string) => {
    for (const name of fs.readdirSync(dir).sort()) {
      if (dir === repo && name === '.git') continue;
      const full = path.join(dir, name);
      const st = fs.lstatSync(full);
      const rel = path.relative(repo, full).split(path.sep).join('/');
      if (st.isDirectory()) walk(full);
      else if (st.isSymbolicLink())
        out.set(rel, { kind: 'link', oid: blobOid(Buffer.from(fs.readlinkSync(full))), exec: false, ignored: false });
      else
        out.set(rel, {
          kind: 'file',
          oid: blobOid(fs.readFileSync(full)),
          exec: (st.mode & 0o100) !== 0,
          ignored: false,
        });
    }
  };
  walk(repo);
  for (const rel of ignoredPaths(repo)) {
    const e = out.get(rel);
    if (e) e.ignored = true;
  }
  return out;
}

/** Untracked files git ignores now (.gitignore files, .git/info/exclude). */
export function ignoredPaths(repo: string): string[] {
  return git(repo, '-c', 'core.quotePath=false', 'ls-files', '-z', '--others', '--ignored', '--exclude-standard')
    .split('\0')
    .filter(Boolean);
}

export function describeEntry(e: Entry | undefined): string {
  if (!e) return 'absent';
  return `${e.kind}${e.exec ? '+x' : ''} ${e.oid.slice(0, 8)}${e.ignored ? ' (ignored)' : ''}`;
}

const same = (a: Entry | undefined, b: Entry | undefined) =>
  a === undefined || b === undefined ? a === b : a.kind === b.kind && a.oid === b.oid && a.exec === b.exec;

/**
 * The paths where `actual` differs from `expected`, leaving out every path that is ignored in a snapshot that
 * has it (ignored files follow their own rule, docs/design/ignore-rules.md) and those `skip` names.
 */
export function differences(
  expected: Snapshot,
  actual: Snapshot,
  skip: (rel: string) => boolean = () => false,
): string[] {
  const out: string[] = [];
  for (const rel of new Set([...expected.keys(), ...actual.keys()])) {
    const a = expected.get(rel);
    const b = actual.get(rel);
    if (a?.ignored || b?.ignored || skip(rel)) continue;
    if (!same(a, b)) out.push(`${rel}: expected ${describeEntry(a)}, found ${describeEntry(b)}`);
  }
  return out.sort();
}

export function sameEntry(a: Entry | undefined, b: Entry | undefined): boolean {
  return same(a, b);
}

/** Paths whose entry differs between two snapshots (ignored ones included). */
export function changedPaths(before: Snapshot, after: Snapshot): string[] {
  return [...new Set([...before.keys(), ...after.keys()])].filter((rel) => !same(before.get(rel), after.get(rel)));
}
