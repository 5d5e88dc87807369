import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CLI, TEST_BUILD_CLI } from '../cliProcess';
import { cleanupTempDirs, git, gitStatus, indexBlobs, makeRepo, testGitEnv } from '../gitFixtures';
import { slowGit } from '../slowGit';
import { worktreeTree } from '../turnFixtures';
import { applyEdit } from './edits';
import { prng } from './prng';
import { changedPaths, describeEntry, differences, sameEntry, snapshot, Snapshot } from './snapshot';
import { Chat, describeStep, drawStep, Outcome, RestoreOp, Step } from './steps';

/**
 * A model-checked random run of the shipped CLI (dist/cli.js) on a real git repository (issue 33, "A property test
 * of our own"). After every step:
 * - nothing lost: every content the product was given to keep (the tree at each turn begin, completed turn end,
 *   user commit, and before each Undo, Redo, Restore or Undo This File) is in the tree or in an object reachable
 *   from a ref; a restore loses no ignored file's content either;
 * - an Undo of turn T gives back exactly the tree before T began; a Redo exactly the tree the Undo replaced; Undo
 *   Only This Turn and Undo This File change exactly the turn's paths (the file's) back and nothing else; a Restore
 *   exactly the version's tree. Ignored files follow docs/design/ignore-rules.md: left out of exact comparisons,
 *   and never changed or deleted by a restore unless tracked afterwards or written since the undone turn began;
 * - a refusal (exit 1, 2, 3) changes nothing (tree, HEAD) and says why; a refusal the README does not allow (Redo
 *   right after an Undo, Undo right after a lone completed turn) fails the run.
 */

export interface FuzzOptions {
  seed: number;
  steps: number;
  /** Replays exactly these steps instead of drawing them (a shortened failing list). */
  given?: readonly Step[];
  /** Keeps the repository (its path is in the result) instead of deleting it. */
  keep?: boolean;
  /** The command to run instead of dist/cli.js (the tests' sabotaged CLI proves the checks fail). */
  cli?: string;
}

export interface FuzzResult {
  seed: number;
  ok: boolean;
  /** Every step run, with what came of it. */
  log: string[];
  steps: Step[];
  failure?: string;
  /** Refusals the README allows (recorded, not failures). */
  refusals: string[];
  repo: string;
}

interface TurnModel {
  id: string;
  chat: Chat;
  /** The tree right before `turn begin`. */
  pre: Snapshot;
  beginStep: number;
  /** The tree at `turn end` (completed turns that made a version). */
  end?: Snapshot;
  version?: string | null;
  outcome?: Outcome;
  /** Another chat's turn ran while this one did, or the user committed during it: its own changes are not P→E. */
  mixed: boolean;
  /** The tree was clean at its begin and only the agent wrote during it: what it leaves is only its own. */
  ownOnly: boolean;
}

interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
  signal: NodeJS.Signals | null;
}

class FuzzFailure extends Error {}

function runCli(repo: string, args: readonly string[], env: NodeJS.ProcessEnv, bundle: string): CliRun {
  const r = spawnSync(process.execPath, [bundle, ...args], {
    cwd: repo,
    input: '',
    encoding: 'utf8',
    env: { ...testGitEnv(), ...env },
    timeout: 120_000,
  });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr, signal: r.signal };
}

function json<T>(r: CliRun): T | null {
  try {
    return JSON.parse(r.stdout) as T;
  } catch {
    return null;
  }
}

const headOf = (repo: string) => git(repo, 'rev-parse', 'HEAD').trim();

/** Blob ids reachable from any ref (`refs`), and those or staged in the index or in the tree (ignored files too). */
function keptContent(repo: string, tree: Snapshot): { refs: Set<string>; all: Set<string> } {
  const refs = new Set<string>();
  const objects = gitStatus(repo, 'rev-list', '--objects', '--all');
  const oids = objects.stdout
    .split('\n')
    .map((l) => l.split(' ')[0])
    .filter(Boolean);
  const types = spawnSync('git', ['cat-file', '--batch-check=%(objectname) %(objecttype)'], {
    cwd: repo,
    input: oids.join('\n'),
    encoding: 'utf8',
    env: testGitEnv(),
    maxBuffer: 256 * 1024 * 1024,
  }).stdout;
  for (const line of types.split('\n')) {
    const [oid, type] = line.split(' ');
    if (type === 'blob') refs.add(oid);
  }
  return { refs, all: new Set([...refs, ...[...tree.values()].map((e) => e.oid), ...indexBlobs(repo)]) };
}

function gitLocks(repo: string): string[] {
  const found: string[] = [];
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name.endsWith('.lock')) found.push(full);
    }
  };
  walk(path.join(repo, '.git', 'refs'));
  for (const name of ['HEAD.lock', 'index.lock'])
    if (fs.existsSync(path.join(repo, '.git', name))) found.push(path.join(repo, '.git', name));
  return found;
}

export function runFuzz(options: FuzzOptions): FuzzResult {
  const r = prng(options.seed);
  const bundle = options.cli ?? CLI;
  const cli = (repo: string, args: readonly string[], env: NodeJS.ProcessEnv = {}, which = bundle) =>
    runCli(repo, args, env, which);
  const repo = makeRepo();
  const result: FuzzResult = { seed: options.seed, ok: true, log: [], steps: [], refusals: [], repo };
  const turns: TurnModel[] = [];
  const running = new Map<Chat, number>();
  /** The trees Undo, Undo Only This Turn and Undo This File replaced, for the Redos that may follow. */
  /**
   * The trees Undos replaced, newest last; `undone` (the tree the Undo left) for an Undo that kept later work: its
   * Redo, when it runs in place (scope `turn`), writes back only the paths that differ between the two and keeps
   * the user's edits made since elsewhere (restorePlan.ts, inPlaceRedoPlan).
   */
  let redoStack: { tree: Snapshot; undone?: Snapshot }[] = [];
  let redone: { tree: Snapshot; undone?: Snapshot } | undefined;
  let redoneInPlace = false;
  /** Nothing happened since the Undo on top of redoStack: a Redo must bring it back (README). */
  let redoRequired = false;
  /** A killed restore changed the tree: whether an Undo landed is unknown, so a Redo may bring one back. */
  let redoUnknown = false;
  const clearRedo = () => {
    redoStack = [];
    redoRequired = false;
    redoUnknown = false;
  };
  /** Content the product was given to keep: blob id → the step that gave it. */
  const mustKeep = new Map<string, number>();
  /** The last step that changed each path (any step: edits, turns, restores). */
  const lastWritten = new Map<string, number>();
  let tree = snapshot(repo);
  let stepNo = 0;
  /** The previous step, for the refusals the README does not allow. */
  let previous: { kind: string; turn?: TurnModel; stopped?: TurnModel } = { kind: 'start' };
  /** The tree before the step's Undo, Redo or Restore: no ignored content of it may be lost by the operation. */
  let ignoredBefore: Snapshot | null = null;

  const fail = (message: string): never => {
    throw new FuzzFailure(message);
  };
  const keep = (snap: Snapshot, ignoredToo: boolean) => {
    for (const e of snap.values()) if ((ignoredToo || !e.ignored) && !mustKeep.has(e.oid)) mustKeep.set(e.oid, stepNo);
  };
  const versionsView = () =>
    turns.flatMap((t, i) =>
      t.version && t.end
        ? [
            {
              turn: i,
              changed: changedPaths(t.pre, t.end).filter((p) => !t.pre.get(p)?.ignored && !t.end?.get(p)?.ignored),
            },
          ]
        : [],
    );

  /** A refusal: nothing changed, a message said why. Returns its first line. */
  const refused = (what: string, run: CliRun, before: Snapshot, headBefore: string): string => {
    const after = snapshot(repo);
    const changed = changedPaths(before, after);
    if (changed.length > 0)
      fail(`${what} exited ${run.code} (a refusal) but changed ${changed.map((p) => JSON.stringify(p)).join(', ')}`);
    if (headOf(repo) !== headBefore) fail(`${what} exited ${run.code} (a refusal) but moved HEAD`);
    const message = (run.stderr.trim() || run.stdout.trim()).split('\n')[0] ?? '';
    if (message === '') fail(`${what} exited ${run.code} without a message`);
    result.refusals.push(`step ${stepNo} ${what}: exit ${run.code}: ${message}`);
    return message;
  };

  /** The Undo-style check of ignored files: a restore never changes or deletes an ignored file it does not track. */
  const ignoredKept = (what: string, before: Snapshot, after: Snapshot, writtenSince: number | null) => {
    const tracked = new Set(git(repo, 'ls-files', '-z').split('\0').filter(Boolean));
    for (const [rel, e] of before) {
      if (!e.ignored || tracked.has(rel) || sameEntry(e, after.get(rel))) continue;
      if (writtenSince !== null && (lastWritten.get(rel) ?? -1) >= writtenSince) continue;
      fail(`${what}: the ignored ${JSON.stringify(rel)} (${describeEntry(e)}) became ${describeEntry(after.get(rel))}`);
    }
  };

  const exact = (what: string, expected: Snapshot, after: Snapshot) => {
    const diff = differences(expected, after);
    if (diff.length > 0) fail(`${what} is not exact:\n    ${diff.join('\n    ')}`);
  };

  /** Running turns as the product sees them (a restore may end a running turn: its partial work is saved). */
  const syncRunning = () => {
    if (running.size === 0) return;
    const s = json<{ runningTurns: { turnId: string }[] }>(cli(repo, ['status', '--json']));
    if (!s) return;
    const ids = new Set(s.runningTurns.map((t) => t.turnId));
    for (const [chat, i] of [...running]) if (!ids.has(turns[i].id)) running.delete(chat);
  };

  /** Undo, Redo or Restore (`args`), run or killed; the checks of its outcome. */
  const restoreOp = (
    op: RestoreOp | 'undoOnly' | 'undoFile',
    args: string[],
    run: CliRun,
    before: Snapshot,
    headBefore: string,
    extra: { turn?: TurnModel; path?: string; target?: string },
  ) => {
    const what = `agent-versions ${args.filter((a) => a !== '--json').join(' ')}`;
    if (run.code !== 0) {
      if (![1, 2, 3].includes(run.code))
        fail(`${what} exited ${run.code}${run.signal ? ` (${run.signal})` : ''}: ${run.stderr.trim()}`);
      const message = refused(what, run, before, headBefore);
      if (op === 'redo' && redoRequired) fail(`Redo refused right after an Undo with nothing in between: ${message}`);
      if (op === 'undo' && previous.kind === 'end' && previous.turn && !previous.turn.mixed && running.size === 0)
        fail(`Undo refused right after a completed turn with nothing in between: ${message}`);
      // Issue 33 item 3: the partial work of a stopped turn is saved as [Interrupted], never refused as the user's.
      if ((op === 'undo' || op === 'restore') && previous.stopped && /uncommitted changes/.test(message))
        fail(`${what} refused a stopped turn's partial work as uncommitted changes: ${message}`);
      // A refusal changes nothing: the redo stack stays as it was.
      return;
    }
    const out = json<{ result: string; scope?: string; turnId?: string; preserved?: string }>(run);
    if (!out) fail(`${what} printed no JSON: ${run.stdout.slice(0, 200)}`);
    const after = snapshot(repo);
    result.log[result.log.length - 1] += ` → ${out!.result}${out!.scope ? ` (${out!.scope})` : ''}`;
    if (op === 'redo' && redoRequired && out!.result !== 'restored')
      fail(`Redo right after an Undo with nothing in between said ${out!.result}`);
    if (out!.result === 'restored') {
      // In place (scope turn / file), what the restore did not write stays the user's uncommitted work, theirs to
      // overwrite later; what it replaced is the product's to keep. A whole-tree restore answers for all of it.
      if (out!.scope !== undefined && out!.scope !== 'everything') {
        const after = snapshot(repo);
        keep(new Map([...before].filter(([rel, e]) => !sameEntry(e, after.get(rel)))), false);
      } else keep(before, false);
      // A restore while a turn runs writes into that turn's tree: its own changes are no longer its end minus its
      // start (as with a commit of the user's meanwhile).
      for (const i of running.values()) turns[i].mixed = true;
    }
    if (out!.result !== 'restored') {
      const changed = changedPaths(before, after);
      if (changed.length > 0) fail(`${what} said ${out!.result} but changed ${changed.join(', ')}`);
      // Nothing happened: a Redo the stack holds may still come (whether it must is not the README's to say).
      if (op !== 'redo') redoRequired = false;
      return;
    }
    if (op === 'undo' && out!.scope !== 'turn') {
      const i = turns.findIndex((t) => t.id === out!.turnId);
      if (i < 0) fail(`Undo undid a turn the run does not know (${out!.turnId})`);
      const t = turns[i];
      exact(`Undo of turn #${i} (the tree before it began)`, t.pre, after);
      ignoredKept(`Undo of turn #${i}`, before, after, t.beginStep);
      // Ignored files the user had before the turn, untouched since, stay (issue 33 item 1).
      for (const [rel, e] of t.pre)
        if (e.ignored && (lastWritten.get(rel) ?? -1) < t.beginStep && !sameEntry(e, after.get(rel)))
          fail(`Undo of turn #${i} took the user's ignored ${JSON.stringify(rel)} (${describeEntry(after.get(rel))})`);
      // An Undo that first saved work made since ([Interrupted]) starts a new stack (README, Redo).
      if (out!.preserved) redoStack = [];
      redoStack.push({ tree: before });
      redoRequired = true;
    } else if (op === 'redo') {
      redone = redoStack.pop();
      // In place (`scope: turn`; restorePlan.ts, inPlaceRedoPlan): the tree before the Redo with what the Undo
      // changed put back. Otherwise (an Undo of everything, a turn open, git refused to write in place) the whole
      // tree the Undo replaced, as before.
      redoneInPlace = out!.scope === 'turn';
      if (redoneInPlace && !redone?.undone) fail('Redo ran in place though its Undo replaced the whole tree');
      if (redoneInPlace && redone?.undone) {
        const expected = new Map(before);
        for (const rel of new Set([...redone.tree.keys(), ...redone.undone.keys()])) {
          if (sameEntry(redone.tree.get(rel), redone.undone.get(rel))) continue;
          const e = redone.tree.get(rel);
          if (e) expected.set(rel, e);
          else expected.delete(rel);
        }
        exact('Redo in place (what the Undo changed, put back)', expected, after);
      } else if (redone) exact('Redo (the tree the Undo replaced)', redone.tree, after);
      else if (!redoUnknown) fail('Redo brought back a tree though no Undo since the last commit, turn or Restore');
      redoRequired = redoStack.length > 0 && redoRequired;
      ignoredKept('Redo', before, after, null);
    } else if (op === 'undoOnly' || (op === 'undo' && out!.scope === 'turn')) {
      const t = extra.turn ?? turns.find((x) => x.id === out!.turnId);
      // Exact when later work left the turn's own paths as the turn left them; otherwise git's three-way merge of
      // the reverse decides (a rename followed to an edit made since, say), and nothing lost is what is checked.
      const untouched = (t: TurnModel, paths: Iterable<string>) =>
        [...paths].every((rel) => sameEntry(t.end!.get(rel), before.get(rel)));
      if (t && t.end && !t.mixed && untouched(t, changedPaths(t.pre, t.end))) {
        const own = new Set(changedPaths(t.pre, t.end));
        const expected = new Map(before);
        for (const rel of own) {
          const e = t.pre.get(rel);
          if (e) expected.set(rel, e);
          else expected.delete(rel);
        }
        exact(
          `Undo Only This Turn of turn #${turns.indexOf(t)} (its own paths back, the rest as it was)`,
          expected,
          after,
        );
      }
      ignoredKept('Undo Only This Turn', before, after, null);
      // An Undo that first saved work made since ([Interrupted]) starts a new stack (README, Redo).
      if (out!.preserved) redoStack = [];
      redoStack.push({ tree: before, undone: after });
      redoRequired = true;
    } else if (op === 'undoFile') {
      const t = extra.turn!;
      const rel = extra.path!;
      if (!t.mixed && t.end && sameEntry(t.end.get(rel), before.get(rel))) {
        const expected = new Map(before);
        const e = t.pre.get(rel);
        if (e) expected.set(rel, e);
        else expected.delete(rel);
        exact(`Undo This File ${JSON.stringify(rel)} of turn #${turns.indexOf(t)}`, expected, after);
      }
      ignoredKept('Undo This File', before, after, null);
      // An Undo that first saved work made since ([Interrupted]) starts a new stack (README, Redo).
      if (out!.preserved) redoStack = [];
      redoStack.push({ tree: before, undone: after });
      redoRequired = true;
    } else if (op === 'restore') {
      const want = git(repo, 'rev-parse', `${extra.target}^{tree}`).trim();
      const have = worktreeTree(repo);
      if (want !== have) {
        // Files the rules ignored before the restore are the user's and stay as they were, though the version's
        // rules show them (docs/design/ignore-rules.md): left out here, checked by ignoredKept.
        const diff = git(repo, '-c', 'core.quotePath=false', 'diff-tree', '-r', '-z', '--name-status', want, have)
          .split('\0')
          .filter(Boolean)
          .reduce<string[][]>(
            (pairs, x, i) => (i % 2 === 0 ? [...pairs, [x]] : (pairs[pairs.length - 1].push(x), pairs)),
            [],
          )
          .filter(
            ([status, rel]) =>
              !(status === 'A' && before.get(rel)?.ignored && sameEntry(before.get(rel), after.get(rel))),
          );
        if (diff.length > 0)
          fail(
            `Restore of ${extra.target} is not exact (tree ${have}, the version's ${want}):\n    ${diff.map((d) => d.join(' ')).join('\n    ')}`,
          );
      }
      ignoredKept('Restore', before, after, null);
      clearRedo();
    }
    // After the exact comparisons, which name what differs.
    if ((op === 'redo' && !redoneInPlace) || op === 'restore' || (op === 'undo' && out!.scope !== 'turn')) {
      // A whole-tree restore is recorded as a commit of exactly the tree it wrote: nothing is left behind as an
      // untracked or changed file (issue 33 item 6), but the user's files the rules ignored before it.
      const left = git(repo, '-c', 'core.quotePath=false', 'status', '-z', '--porcelain', '--untracked-files=all')
        .split('\0')
        .filter(Boolean)
        .map((l) => l.slice(3))
        .filter((rel) => !(before.get(rel)?.ignored && sameEntry(before.get(rel), after.get(rel))));
      if (left.length > 0)
        fail(`${what} left changes outside its commit: ${left.map((p) => JSON.stringify(p)).join(', ')}`);
    }
  };

  const execute = (step: Step): void => {
    const before = tree;
    const headBefore = headOf(repo);
    const log = (s: string) => (result.log[result.log.length - 1] += s);
    let clearsRedo = true;
    switch (step.kind) {
      case 'edit': {
        if (step.who === 'user') for (const i of running.values()) turns[i].ownOnly = false;
        if (!applyEdit(repo, step.edit)) log(' (nothing to act on)');
        // README: a commit, a turn or a Restore ends the redo stack; an edit does not, but a Redo may then refuse.
        redoRequired = false;
        clearsRedo = false;
        break;
      }
      case 'commit': {
        keep(before, false);
        gitStatus(repo, 'add', '-A');
        const c = gitStatus(repo, 'commit', '-q', '-m', `user commit ${stepNo}`);
        if (c.code !== 0) {
          // No commit was made: nothing happened that ends the redo stack.
          log(' (nothing to commit)');
          clearsRedo = false;
        }
        for (const chat of running.keys()) turns[running.get(chat)!].mixed = true;
        break;
      }
      case 'begin': {
        if (running.has(step.chat)) {
          log(' (its turn runs)');
          clearsRedo = false;
          break;
        }
        const run = cli(repo, ['turn', 'begin', '--chat', step.chat, '--prompt', `step ${stepNo}`, '--json']);
        if (run.code !== 0) {
          refused('turn begin', run, before, headBefore);
          clearsRedo = false;
          break;
        }
        keep(before, false);
        const id = json<{ turnId: string }>(run)!.turnId;
        const mixed = running.size > 0;
        for (const i of running.values()) turns[i].mixed = true;
        const clean = git(repo, 'status', '--porcelain', '--untracked-files=all').trim() === '';
        turns.push({ id, chat: step.chat, pre: before, beginStep: stepNo, mixed, ownOnly: clean && !mixed });
        running.set(step.chat, turns.length - 1);
        log(` → turn #${turns.length - 1}`);
        // README (Redo): a running or stopped turn's work is first saved as [Interrupted]; only a commit ends the
        // redo stack (a completed turn's version, the user's commit, a Restore). A Redo may still refuse.
        redoRequired = false;
        clearsRedo = false;
        break;
      }
      case 'end': {
        const i = running.get(step.chat);
        if (i === undefined) {
          log(' (no turn runs)');
          clearsRedo = false;
          break;
        }
        const t = turns[i];
        const run = cli(repo, ['turn', 'end', t.id, '--outcome', step.outcome, '--json']);
        running.delete(step.chat);
        if (run.code !== 0) {
          refused(`turn end of turn #${i}`, run, before, headBefore);
          break;
        }
        const out = json<{ version: string | null }>(run)!;
        t.outcome = step.outcome;
        t.version = out.version;
        if (step.outcome === 'completed') {
          if (out.version) keep(before, false);
          t.end = before;
          if (out.version) {
            const want = worktreeTree(repo);
            const got = git(repo, 'rev-parse', `${out.version}^{tree}`).trim();
            if (want !== got) fail(`turn #${i}'s version ${out.version} is not the tree at its end`);
          }
        }
        log(` → turn #${i} ${out.version ? `version ${out.version.slice(0, 8)}` : 'no version'}`);
        previous = {
          kind: 'end',
          turn: out.version && step.outcome === 'completed' ? t : undefined,
          stopped: step.outcome !== 'completed' && t.ownOnly && !t.mixed && running.size === 0 ? t : undefined,
        };
        if (out.version) clearRedo();
        else redoRequired = false;
        return;
      }
      case 'undo':
      case 'redo':
      case 'restore':
      case 'undoOnly':
      case 'undoFile': {
        let args: string[];
        const extra: { turn?: TurnModel; path?: string; target?: string } = {};
        if (step.kind === 'undo') args = ['undo', ...(step.yes ? ['--yes'] : [])];
        else if (step.kind === 'redo') args = ['redo'];
        else if (step.kind === 'restore') {
          const line = git(repo, 'rev-list', '--first-parent', 'HEAD').trim().split('\n');
          extra.target = line[Math.min(step.back, line.length - 1)];
          args = ['restore', extra.target, ...(step.yes ? ['--yes'] : [])];
        } else {
          const t = turns[step.turn];
          if (!t) {
            log(' (no such turn)');
            clearsRedo = false;
            break;
          }
          extra.turn = t;
          extra.path = step.kind === 'undoFile' ? step.path : undefined;
          args =
            step.kind === 'undoOnly'
              ? ['undo', '--turn', t.id, '--only', 'turn', ...(step.yes ? ['--yes'] : [])]
              : ['undo-file', step.path, '--turn', t.id, ...(step.yes ? ['--yes'] : [])];
        }
        // What the tree held is the product's to keep once the operation changes something (restoreOp).
        const run = cli(repo, [...args, '--json']);
        const op = step.kind;
        restoreOp(op, [...args, '--json'], run, before, headBefore, extra);
        ignoredBefore = before;
        syncRunning();
        // restoreOp left the redo stack as the operation leaves it (a refusal changes nothing).
        clearsRedo = false;
        break;
      }
      case 'kill': {
        let args: string[];
        let target: string | undefined;
        if (step.op === 'restore') {
          const line = git(repo, 'rev-list', '--first-parent', 'HEAD').trim().split('\n');
          target = line[Math.min(step.back, line.length - 1)];
          args = ['restore', target, '--yes'];
        } else args = [step.op];
        // A kill inside a git command: git held there (slowGit, as the crash sweep does), the kill 300 ms in.
        const during = /^git:(.+):during$/.exec(step.point);
        const unslow = during ? slowGit(repo, during[1]) : null;
        const env = { AVH_FAILPOINT: step.point, ...(during ? { AVH_FAILPOINT_DELAY_MS: '300' } : {}) };
        const run = cli(repo, [...args, '--json'], env, TEST_BUILD_CLI);
        unslow?.();
        if (run.signal !== 'SIGKILL') {
          log(' (the point is not on its path: ran to the end)');
          restoreOp(step.op, [...args, '--json'], run, before, headBefore, { target });
          ignoredBefore = before;
          syncRunning();
          clearsRedo = false;
          break;
        }
        log(' → killed');
        const status = cli(repo, ['status', '--json']);
        const s = json<{ recovery: unknown; operation: unknown }>(status);
        if (!s || ![0, 3].includes(status.code)) fail(`status after the kill exited ${status.code}: ${status.stderr}`);
        // The next command settled the killed operation (docs/product-contract.md §5.4): rolled back, forward, or
        // recovery required.
        if (s!.operation !== null) fail('an operation is still in flight after status');
        if (fs.existsSync(path.join(repo, '.git', 'agent-versions', 'repository.lease')))
          fail('the repository lease is still held after status');
        if (s!.recovery) {
          const check = cli(repo, ['recover', 'check', '--json']);
          log(`; recovery required (check exit ${check.code})`);
          if (gitLocks(repo).length > 0) {
            const rm = cli(repo, ['recover', 'remove-stale-lock', '--json']);
            log(`; remove-stale-lock exit ${rm.code}`);
          }
          let res = cli(repo, ['recover', step.resolve, '--json']);
          log(`; recover ${step.resolve} exit ${res.code}`);
          if (res.code === 3 && step.resolve === 'accept') {
            // Accept refuses while the tree holds changes, and says to save them: the user does.
            res = cli(repo, ['recover', 'save-and-accept', '--json']);
            log(`; recover save-and-accept exit ${res.code}`);
          }
          if (res.code !== 0) fail(`recover exited ${res.code}: ${res.stderr.trim()}${res.stdout.trim()}`);
          const after = cli(repo, ['status', '--json']);
          if (after.code !== 0 || json<{ recovery: unknown }>(after)?.recovery)
            fail(`recovery is still required after recover: ${after.stderr.trim()}`);
        } else if (gitLocks(repo).length > 0) {
          // git was killed inside a command and left its lock; the user removes it, as git and our refusal say.
          log('; a git lock stayed (removed as the user would)');
          for (const lock of gitLocks(repo)) fs.rmSync(lock, { force: true });
        }
        ignoredBefore = before;
        if (!s!.recovery && headOf(repo) === headBefore && changedPaths(before, snapshot(repo)).length === 0) {
          // Rolled back to the old state: as if the operation never ran, so a Redo it stood before still works.
          log('; old state');
          clearsRedo = false;
        } else {
          // The product changed the tree or HEAD: what the tree held before is the product's to keep.
          keep(before, false);
          clearRedo();
          redoUnknown = true;
          clearsRedo = false;
          for (const chat of [...running.keys()]) turns[running.get(chat)!].mixed = true;
        }
        syncRunning();
        break;
      }
      case 'status': {
        const run = cli(repo, ['status', '--json']);
        if (run.code !== 0) fail(`status exited ${run.code}: ${run.stderr.trim()}`);
        clearsRedo = false;
        break;
      }
    }
    if (clearsRedo) clearRedo();
    previous = { kind: step.kind };
  };

  try {
    for (stepNo = 0; stepNo < (options.given?.length ?? options.steps); stepNo++) {
      const step =
        options.given?.[stepNo] ??
        drawStep(r, {
          tree,
          running: new Set(running.keys()),
          versions: versionsView(),
          redoable: redoStack.length > 0,
        });
      result.steps.push(step);
      result.log.push(`${stepNo}. ${describeStep(step)}`);
      execute(step);
      const after = snapshot(repo);
      for (const rel of changedPaths(tree, after)) lastWritten.set(rel, stepNo);
      tree = after;
      // User and agent edits give the product nothing to keep: the checks run after the product's steps.
      if (step.kind === 'edit') continue;
      const kept = keptContent(repo, tree);
      const lost = [...mustKeep].filter(([oid]) => !kept.all.has(oid));
      if (lost.length > 0)
        fail(
          `nothing lost violated: ${lost.length} content(s) given to keep are neither in the tree nor reachable ` +
            `(${lost.map(([oid, at]) => `${oid.slice(0, 10)} from step ${at}`).join(', ')})`,
        );
      // What a turn's begin or end, or a commit, was given is in a commit at once, not only on disk.
      const uncaptured = [...mustKeep].filter(([oid, at]) => at === stepNo && !kept.refs.has(oid));
      if (uncaptured.length > 0 && ['begin', 'end', 'commit'].includes(step.kind))
        fail(`${uncaptured.length} content(s) of the tree are in no commit after ${describeStep(step)}`);
      for (const [rel, e] of (ignoredBefore as Snapshot | null) ?? [])
        if (e.ignored && !kept.all.has(e.oid)) fail(`the ignored ${JSON.stringify(rel)}'s content (${e.oid}) is lost`);
      ignoredBefore = null;
    }
  } catch (error) {
    result.ok = false;
    result.failure = error instanceof FuzzFailure ? error.message : `${(error as Error).stack ?? String(error)}`;
  } finally {
    if (!options.keep) cleanupTempDirs();
  }
  return result;
}

/** A failing run as a report: seed, every step with its outcome, the failure, and how to replay it. */
export function formatFailure(r: FuzzResult, steps: number): string {
  return [
    `seed ${r.seed} failed at step ${r.log.length - 1}: ${r.failure}`,
    'steps:',
    ...r.log.map((l) => `  ${l}`),
    `replay: node scripts/fuzz.mjs --seed ${r.seed} --steps ${steps} (after npm run build && npm run compile)`,
  ].join('\n');
}
