/**
 * Issue 33, "Real histories": real repository histories (the packs in test/fixtures/histories/, README there)
 * replayed as agent turns through the shipped CLI bundle (dist/cli.js) in real git repositories. Each turn makes the
 * working tree exactly a pack commit's tree (renames, deletes, mode changes, symlinks, a file→symlink type change,
 * .gitignore edits, PNG binaries), and its version must be exactly that commit's tree; now and then the user edits or
 * commits between turns, a turn runs in a second chat or is stopped halfway. At the end every step is undone one after
 * another and then redone: each Undo must give back exactly the tree before its turn and each Redo exactly the tree
 * its Undo replaced (paths, modes, symlink targets, bytes; .git left out), and no content that ever existed is lost.
 */
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  assertNothingLost,
  cleanupTempDirs,
  contentInventory,
  git,
  makeRepo,
  tempDir,
  testGitEnv,
} from '../support/gitFixtures';
import { dist, distBegin, distJson } from '../support/turnFixtures';

const ROOT = path.resolve(__dirname, '../../..');
const PACKS = path.join(ROOT, 'test/fixtures/histories');

type Kind = 'rename' | 'delete' | 'mode' | 'symlink' | 'typechange' | 'gitignore' | 'binary';

interface PackCase {
  name: string;
  /**
   * Indexes into the pack's chain (0 = its first commit): the first is the repository's first commit, each next
   * one a turn. Where the list skips commits, one turn carries all their changes (still a real tree).
   */
  commits: number[];
  /** Change kinds the replayed turns must include, so the test cannot silently stop covering them. */
  kinds: Kind[];
  /** Where AVH_HISTORY_FULL=1 starts (every commit from there to the pack's end is a turn). */
  fullFrom: number;
  /** Added to the turn number for the story below, so that short replays still meet each of its events. */
  storyFrom: number;
}

/**
 * Each CLI process costs half a second to a second on a loaded machine, so the default run replays two or three turns
 * per pack, chosen (skipping commits where the list jumps) so that each kind of change is in them, then undoes them
 * all one after another and redoes them all. AVH_HISTORY_FULL=1 replays every commit of each pack (nvm's from 67), with
 * an Undo and Redo after every third turn and a run of four at the end (several minutes).
 */
const FULL = process.env.AVH_HISTORY_FULL === '1';

const CASES: PackCase[] = [
  // Executable bits set on existing files (68, 70) and new executables; names with spaces. (It starts at 67: that
  // commit adds a test file with a bearer token in it, which a turn leaves out of its version by design, README.)
  { name: 'nvm', commits: [67, 68, 70], kinds: ['mode'], fullFrom: 67, storyFrom: 0 },
  // Symlinks added, deletes and a rename (43-47), a .gitignore edit (48-70), a file→symlink type change, another
  // .gitignore edit and more symlinks (71-78).
  {
    name: 'pyenv',
    commits: [42, 47, 70, 78],
    kinds: ['symlink', 'delete', 'rename', 'gitignore', 'typechange'],
    fullFrom: 0,
    storyFrom: 0,
  },
  // Deletes (15), PNGs added (16-38) and then one added and one changed (39-52); its turns are the story's second to
  // fourth (a second chat, the user's uncommitted edit, then a commit of theirs and a stopped turn).
  { name: 'hyperfine', commits: [14, 15, 38, 52], kinds: ['delete', 'binary'], fullFrom: 0, storyFrom: 1 },
];

/** What happens when, by turn number (1-based, plus the pack's storyFrom), so every run replays the same story. */
const CHECK_AFTER = (t: number) => FULL && t % 3 === 0; // Undo then Redo right after the turn
const SECOND_CHAT = (t: number) => t % 4 === 2;
const USER_EDITS_BEFORE = (t: number) => t % 4 === 3; // an uncommitted edit the turn then overwrites
const USER_COMMITS_BEFORE = (t: number) => t % 4 === 0; // a commit of the user's own between two turns
const STOPPED_BEFORE = (t: number) => t % 4 === 0; // then a cancelled turn wrote part of the changes
const FINAL_RUN = FULL ? 4 : Infinity; // the last steps undone one after another, then redone in order

function range(from: number, to: number): number[] {
  return Array.from({ length: to - from + 1 }, (_, i) => from + i);
}

interface Entry {
  mode: string;
  oid: string;
}

/** A pack cloned into a temporary bare repository, with its blobs read once. */
class Pack {
  readonly gitDir: string;
  readonly chain: string[];
  private readonly blobs = new Map<string, Buffer>();
  private readonly originals = new Map<string, string>();
  private readonly trees = new Map<string, Map<string, Entry>>();

  constructor(name: string) {
    this.gitDir = path.join(tempDir('avh-pack-'), `${name}.git`);
    git(PACKS, 'clone', '-q', '--bare', path.join(PACKS, `${name}.bundle`), this.gitDir);
    this.chain = this.git('rev-list', '--reverse', 'main').toString().trim().split('\n');
  }

  git(...args: string[]): Buffer {
    return execFileSync('git', ['--git-dir', this.gitDir, ...args], {
      env: testGitEnv(),
      maxBuffer: 256 * 1024 * 1024,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  }

  /** The original repository's commit a pack commit was made from (its `Original-Commit:` line). */
  original(commit: string): string {
    if (this.originals.size === 0)
      for (const record of this.git('log', '--format=%H%n%B%x00', 'main').toString('utf8').split('\0')) {
        const m = /^\s*([0-9a-f]+)\n[^]*?^Original-Commit: ([0-9a-f]+)/m.exec(record);
        if (m) this.originals.set(m[1], m[2].slice(0, 12));
      }
    return this.originals.get(commit) ?? commit.slice(0, 12);
  }

  treeOid(commit: string): string {
    return this.git('rev-parse', `${commit}^{tree}`).toString().trim();
  }

  /** Every path of the commit's tree with its mode and blob. */
  entries(commit: string): Map<string, Entry> {
    const known = this.trees.get(commit);
    if (known) return known;
    const out = new Map<string, Entry>();
    this.trees.set(commit, out);
    for (const record of this.git('ls-tree', '-r', '-z', '--full-tree', commit).toString('utf8').split('\0')) {
      const m = /^(\d+) (\w+) ([0-9a-f]+)\t(.*)$/s.exec(record);
      if (m && m[2] === 'blob') out.set(m[4], { mode: m[1], oid: m[3] });
    }
    this.load([...out.values()].map((e) => e.oid));
    return out;
  }

  blob(oid: string): Buffer {
    const data = this.blobs.get(oid);
    assert.ok(data, `blob ${oid} was loaded`);
    return data;
  }

  private load(oids: string[]): void {
    const missing = [...new Set(oids)].filter((oid) => !this.blobs.has(oid));
    if (missing.length === 0) return;
    const out = execFileSync('git', ['--git-dir', this.gitDir, 'cat-file', '--batch'], {
      input: missing.join('\n') + '\n',
      env: testGitEnv(),
      maxBuffer: 256 * 1024 * 1024,
    });
    let at = 0;
    for (const oid of missing) {
      const eol = out.indexOf(0x0a, at);
      const [got, type, size] = out.subarray(at, eol).toString().split(' ');
      assert.equal(`${got} ${type}`, `${oid} blob`);
      const start = eol + 1;
      this.blobs.set(oid, Buffer.from(out.subarray(start, start + Number(size))));
      at = start + Number(size) + 1;
    }
  }

  /** The kinds of change from one pack commit's tree to another's (git's rename detection). */
  kinds(from: string, to: string): Set<Kind> {
    const kinds = new Set<Kind>();
    const fields = this.git('diff-tree', '-r', '-M', '-z', '--raw', from, to).toString('utf8').split('\0');
    this.load(
      fields
        .filter((f) => f.startsWith(':'))
        .map((f) => f.split(' ')[3])
        .filter((oid) => !/^0+$/.test(oid)),
    );
    for (let i = 0; i < fields.length - 1;) {
      const [srcMode, dstMode, , dstOid, status] = fields[i].slice(1).split(' ');
      const paths = status.startsWith('R') || status.startsWith('C') ? [fields[i + 1], fields[i + 2]] : [fields[i + 1]];
      i += 1 + paths.length;
      if (status.startsWith('R')) kinds.add('rename');
      if (status === 'D') kinds.add('delete');
      if (status === 'T') kinds.add('typechange');
      if (status === 'M' && srcMode !== dstMode) kinds.add('mode');
      if (srcMode === '120000' || dstMode === '120000') kinds.add('symlink');
      if (paths.some((p) => path.posix.basename(p) === '.gitignore')) kinds.add('gitignore');
      if (status !== 'D' && dstMode !== '120000' && this.blob(dstOid).subarray(0, 8000).includes(0))
        kinds.add('binary');
    }
    return kinds;
  }
}

/** Every file under `repo` but .git: path → mode and content (a symlink's target, a file's bytes and exec bit). */
function snapshot(repo: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (dir: string) => {
    for (const name of fs.readdirSync(dir)) {
      const full = path.join(dir, name);
      const rel = path.relative(repo, full).split(path.sep).join('/');
      if (rel === '.git') continue;
      const st = fs.lstatSync(full);
      if (st.isDirectory()) walk(full);
      else if (st.isSymbolicLink()) out.set(rel, `symlink -> ${fs.readlinkSync(full)}`);
      else {
        const hash = crypto.createHash('sha1').update(fs.readFileSync(full)).digest('hex');
        out.set(rel, `${st.mode & 0o111 ? 'executable' : 'file'} ${hash}`);
      }
    }
  };
  walk(repo);
  return out;
}

/** What differs between two snapshots, by path (no contents: a hash names the bytes). */
function differences(actual: Map<string, string>, expected: Map<string, string>): string[] {
  const out: string[] = [];
  for (const [p, want] of expected) {
    const got = actual.get(p);
    if (got === undefined) out.push(`${p}: missing (want ${want})`);
    else if (got !== want) out.push(`${p}: ${got} (want ${want})`);
  }
  for (const [p, got] of actual) if (!expected.has(p)) out.push(`${p}: should not exist (${got})`);
  return out.sort();
}

/** Writes `entries` into the working tree: each path exactly as the tree has it (mode, symlink target, bytes). */
function writeEntries(repo: string, pack: Pack, entries: Iterable<[string, Entry | null]>): void {
  for (const [rel, entry] of entries) {
    const full = path.join(repo, rel);
    const st = lstatOrNull(full);
    if (entry === null) {
      if (st) fs.rmSync(full, { recursive: true, force: true });
      continue;
    }
    const data = pack.blob(entry.oid);
    if (st?.isDirectory()) fs.rmSync(full, { recursive: true, force: true });
    else if (st) fs.unlinkSync(full);
    clearFileAncestors(repo, rel);
    fs.mkdirSync(path.dirname(full), { recursive: true });
    if (entry.mode === '120000') fs.symlinkSync(data.toString('utf8'), full);
    else {
      fs.writeFileSync(full, data);
      fs.chmodSync(full, entry.mode === '100755' ? 0o755 : 0o644);
    }
  }
}

/** A file or symlink where a folder must go (a path that turns into a directory) is taken away first. */
function clearFileAncestors(repo: string, rel: string): void {
  const parts = rel.split('/');
  for (let i = 1; i < parts.length; i++) {
    const full = path.join(repo, ...parts.slice(0, i));
    const st = lstatOrNull(full);
    if (st && !st.isDirectory()) fs.unlinkSync(full);
  }
}

function lstatOrNull(full: string): fs.Stats | null {
  try {
    return fs.lstatSync(full);
  } catch {
    return null;
  }
}

/** Makes the working tree exactly `commit`'s tree: other files go, changed ones are rewritten, empty folders go. */
function writeTree(repo: string, pack: Pack, commit: string): void {
  const entries = pack.entries(commit);
  const current = snapshot(repo);
  const changes: [string, Entry | null][] = [];
  for (const rel of current.keys()) if (!entries.has(rel)) changes.push([rel, null]);
  for (const [rel, entry] of entries) {
    const want = entryLine(pack, entry);
    if (current.get(rel) !== want) changes.push([rel, entry]);
  }
  writeEntries(repo, pack, changes);
  removeEmptyFolders(repo, repo);
}

/** The snapshot line a tree entry gives. */
function entryLine(pack: Pack, entry: Entry): string {
  const data = pack.blob(entry.oid);
  if (entry.mode === '120000') return `symlink -> ${data.toString('utf8')}`;
  const hash = crypto.createHash('sha1').update(data).digest('hex');
  return `${entry.mode === '100755' ? 'executable' : 'file'} ${hash}`;
}

function removeEmptyFolders(repo: string, dir: string): void {
  for (const name of fs.readdirSync(dir)) {
    const full = path.join(dir, name);
    if (full === path.join(repo, '.git') || !fs.lstatSync(full).isDirectory()) continue;
    removeEmptyFolders(repo, full);
    if (fs.readdirSync(full).length === 0) fs.rmdirSync(full);
  }
}

/**
 * What a stopped turn leaves: of the paths that differ between the working tree and `commit` (sorted), the first is
 * cut off halfway (a file written up to the middle of its new bytes; a delete or a symlink not done yet) and every
 * other one after it is written in full, so the completed turn after it always has something left to do.
 */
function writePart(repo: string, pack: Pack, commit: string): void {
  const entries = pack.entries(commit);
  const current = snapshot(repo);
  const changed = [...new Set([...current.keys(), ...entries.keys()])]
    .filter((rel) => current.get(rel) !== (entries.has(rel) ? entryLine(pack, entries.get(rel)!) : undefined))
    .sort();
  assert.ok(changed.length > 0, `${commit} changes something`);
  writeEntries(
    repo,
    pack,
    changed
      .slice(1)
      .flatMap((rel, i): [string, Entry | null][] => (i % 2 === 1 ? [[rel, entries.get(rel) ?? null]] : [])),
  );
  const first = entries.get(changed[0]);
  if (first && first.mode !== '120000') {
    const full = path.join(repo, changed[0]);
    const data = pack.blob(first.oid);
    clearFileAncestors(repo, changed[0]);
    if (lstatOrNull(full)?.isSymbolicLink()) fs.unlinkSync(full);
    fs.mkdirSync(path.dirname(full), { recursive: true });
    fs.writeFileSync(full, data.subarray(0, Math.floor(data.length / 2)));
  }
  removeEmptyFolders(repo, repo);
}

/** A regular file of the working tree, chosen by `n` (sorted paths, so the same one every run). */
function someFile(repo: string, n: number): string {
  const files = [...snapshot(repo)].filter(([, d]) => !d.startsWith('symlink')).map(([p]) => p);
  files.sort();
  return files[(n * 7919) % files.length];
}

/** A turn (completed, or stopped with partial work) as the undo stack holds it. */
interface Step {
  label: string;
  turnId: string;
  /** The working tree right before `turn begin`: what its Undo must give back. */
  before: Map<string, string>;
  /** Whether the user committed right after it (before the next step). */
  userCommitAfter: boolean;
}

interface Restored {
  result: string;
  turnId?: string;
}

function replay(c: PackCase): void {
  const pack = new Pack(c.name);
  const indexes = FULL ? range(c.fullFrom, pack.chain.length - 1) : c.commits;
  const commits = indexes.map((i) => pack.chain[i]);
  assert.ok(commits.every(Boolean), `${c.name}: the pack has commits ${indexes.join(', ')}`);
  const seed = commits[0];
  const where = (label: string) => `${c.name} (seed ${pack.original(seed)}), ${label}`;

  const repo = makeRepo({ commit: false });
  writeTree(repo, pack, seed);
  git(repo, 'add', '-A', '-f'); // the pack's trees track a few files their own .gitignore rules match
  git(repo, 'commit', '-q', '-m', 'first commit of the pack');
  assert.equal(git(repo, 'rev-parse', 'HEAD^{tree}').trim(), pack.treeOid(seed), 'the seed tree is written exactly');

  // Every content the tree or index ever held: remembered after each change the user or a stopped turn makes, and a
  // completed turn's blobs are its pack commit's (its version's tree is checked to be that tree). An Undo or Redo
  // lands on a state remembered before, which it is checked to equal exactly.
  const seen = contentInventory(repo);
  const remember = () => contentInventory(repo).forEach((oid) => seen.add(oid));
  const expectState = (want: Map<string, string>, label: string) =>
    assert.deepEqual(differences(snapshot(repo), want), [], where(label));

  /**
   * Undo of the latest step not yet undone: exactly the tree before it, that turn's id. When it takes
   * away a commit of the user's own it first asks (and changes nothing), then goes on with --yes; `yes` when such a
   * commit lies after the step, even one an Undo of a later step took away already (still on the branch's history).
   * Returns the tree it replaced.
   */
  const undo = (step: Step, label: string, yes = false): Map<string, string> => {
    const replaced = snapshot(repo);
    const at = git(repo, 'rev-parse', 'HEAD').trim();
    if (step.userCommitAfter) {
      const asked = dist(repo, ['undo', '--json']);
      assert.equal(asked.code, 1, where(`${label}: undo of ${step.label} asks first: ${asked.stderr}`));
      assert.match(asked.stdout, /"confirmation-required"/, where(`${label}: undo of ${step.label} asks first`));
      assert.equal(git(repo, 'rev-parse', 'HEAD').trim(), at, where(`${label}: the question changed nothing`));
      expectState(replaced, `${label}: the question changed nothing`);
    }
    const r = distJson<Restored>(repo, yes || step.userCommitAfter ? ['undo', '--yes'] : ['undo']);
    assert.equal(r.result, 'restored', where(`${label}: undo of ${step.label}`));
    assert.equal(r.turnId, step.turnId, where(`${label}: undo of ${step.label} took back that turn`));
    expectState(step.before, `${label}: undo of ${step.label}`);
    return replaced;
  };
  /** Redo: exactly the tree the Undo replaced. */
  const redo = (replaced: Map<string, string>, step: Step, label: string) => {
    const r = distJson<Restored>(repo, ['redo']);
    assert.equal(r.result, 'restored', where(`${label}: redo of ${step.label}`));
    expectState(replaced, `${label}: redo of ${step.label}`);
  };

  const steps: Step[] = [];
  const covered = new Set<Kind>();
  for (let t = 1; t < commits.length; t++) {
    const commit = commits[t];
    const label = `turn ${t} (${pack.original(commit)})`;
    const n = t + c.storyFrom;
    pack.kinds(commits[t - 1], commit).forEach((k) => covered.add(k));

    if (USER_EDITS_BEFORE(n) || USER_COMMITS_BEFORE(n)) {
      fs.appendFileSync(path.join(repo, someFile(repo, t)), `\nthe user's note before turn ${t}\n`);
      if (USER_COMMITS_BEFORE(n)) {
        git(repo, 'commit', '-q', '-a', '-m', `user edit before turn ${t}`);
        if (steps.length > 0) steps[steps.length - 1].userCommitAfter = true;
      }
      remember();
    }
    const chat = SECOND_CHAT(n) ? 'replay-b' : 'replay-a';

    if (STOPPED_BEFORE(n)) {
      const before = snapshot(repo);
      const id = distBegin(repo, chat, 'replay');
      writePart(repo, pack, commit);
      const partial = snapshot(repo);
      distJson(repo, ['turn', 'end', id, '--outcome', 'cancelled']);
      expectState(partial, `${label}: a cancelled turn leaves its partial work`);
      steps.push({ label: `the stopped turn before ${label}`, turnId: id, before, userCommitAfter: false });
      remember();
    }

    const before = snapshot(repo);
    const id = distBegin(repo, chat, 'replay');
    writeTree(repo, pack, commit);
    const after = snapshot(repo);
    const end = distJson<{ version: string | null; excluded: unknown[] }>(repo, [
      'turn',
      'end',
      id,
      '--outcome',
      'completed',
    ]);
    assert.ok(end.version, where(`${label} made a version`));
    assert.deepEqual(end.excluded, [], where(`${label}: no file left out as a secret (pick other commits)`));
    assert.equal(
      git(repo, 'rev-parse', `${end.version}^{tree}`).trim(),
      pack.treeOid(commit),
      where(`${label}: its version is exactly the pack commit's tree`),
    );
    expectState(after, `${label}: turn end leaves the tree as the agent wrote it`);
    const step: Step = { label, turnId: id, before, userCommitAfter: false };
    steps.push(step);
    for (const entry of pack.entries(commit).values()) seen.add(entry.oid);

    if (CHECK_AFTER(n) && t < commits.length - 1) {
      redo(undo(step, 'check'), step, 'check');
      assertNothingLost(repo, seen);
    }
  }

  for (const kind of c.kinds) assert.ok(covered.has(kind), `${c.name}: the replayed turns include a ${kind}`);

  // The last steps undone one after another, each exact, then redone in order: each Redo gives back exactly the
  // tree its Undo replaced (with the user's edits made between the turns, which that Undo took away).
  const run = steps.slice(-Math.min(FINAL_RUN, steps.length)).reverse();
  let crossedUserCommit = false;
  const replaced = run.map((step) => {
    crossedUserCommit ||= step.userCommitAfter;
    return undo(step, 'final run', crossedUserCommit);
  });
  assertNothingLost(repo, seen);
  for (let i = run.length - 1; i >= 0; i--) redo(replaced[i], run[i], 'final run');
  if (FULL) assert.equal(distJson<Restored>(repo, ['redo']).result, 'nothing-to-redo', where('nothing left to redo'));
  assertNothingLost(repo, seen);
}

describe('real histories replayed as agent turns: every Undo and Redo exact (issue 33; shipped CLI, real git)', function () {
  this.timeout(FULL ? 1_800_000 : 120_000);
  afterEach(cleanupTempDirs);

  for (const c of CASES) {
    const turns = FULL ? 'every commit' : `${c.commits.length - 1} turns`;
    it(`${c.name}: ${turns} (${c.kinds.join(', ')})`, () => replay(c));
  }
});
