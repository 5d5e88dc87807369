import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { avhJson, hookTimings, inventory, Sandbox, treeOf } from './agentSandbox';

/**
 * opencode writes its own `.opencode/.gitignore` whenever it finds it missing, at moments of its choosing (a CI run
 * saw it again after `git clean -fdx`): the exact trees compared here leave that one file out.
 */
function exactTree(repo: string): Record<string, string> {
  const { ['.opencode/.gitignore']: _agentOwn, ...tree } = treeOf(repo);
  return tree;
}
import { assertNothingLost, git } from '../../support/gitFixtures';

/**
 * Issue 34's four scenarios — a turn that writes a file then runs `git reset --hard`, `git stash`, `git clean -fdx`
 * with an ignored `.env` and an ignored build folder, `rm -rf src` — as ONE turn of shell commands, so each agent
 * runs once: the same script for every agent (each test has its mock call the agent's own shell tool with these
 * commands), then every checkpoint is restored, the latest first, each to the exact tree just before its command
 * (the trees are worked out from the start tree, not read back), and the turn's own Undo after them. The ignored
 * build folder `git clean -fdx` deletes comes back whole with its checkpoint (a dependency or build folder is kept
 * when it fits the checkpoint's budget; docs/design/command-checkpoints.md).
 */

export const ENV_FILE = '.env';
export const ENV_CONTENT = 'TOKEN=not-a-real-one\n';
export const BUILD_FILE = 'build/app.js';

const AGENT_WRITE = "printf 'agent\\n' >> src.txt";
const STASHED_EDIT = "printf 'stash me\\n' >> README.md";
const DRAFT = "printf 'draft\\n' > src/draft.txt";

/** The destructive commands of the script, in order, and the labels `agent-versions checkpoints` gives them. */
export const DESTRUCTIVE = [
  { command: 'git reset --hard', label: 'git reset --hard' },
  { command: 'git stash', label: 'git stash' },
  { command: 'git clean -fdx', label: 'git clean -x' },
  { command: 'rm -rf src', label: 'rm -r' },
] as const;

export interface CheckpointWorld {
  /** Every shell command the mock has the agent run, one tool call each, in order. */
  commands: string[];
  /** The tree when the turn starts (treeOf: ignored files included). */
  start: Record<string, string>;
  content: Set<string>;
  /** The ignored files at the start, which the checkpoint of `git clean -fdx` keeps (the build folder's included). */
  keptIgnored: string[];
  /** The files HEAD holds at the start, with their content (the turn's version moves HEAD on). */
  committed: Record<string, string>;
}

/**
 * Adds what the four commands destroy to a sandbox whose agent is connected and whose user work is in place: a
 * committed `src/` folder and `.gitignore` lines for `.env` and `build/` (one commit of those paths only: the user's
 * uncommitted edit and untracked file stay as they are), then the ignored `.env` and build output. `rm` replaces
 * `rm -rf src` where the agent itself refuses that form (Codex asks for an approval first).
 */
export function prepareCheckpointTurn(sandbox: Sandbox, options: { rm?: string } = {}): CheckpointWorld {
  const { repo } = sandbox;
  fs.appendFileSync(path.join(repo, '.gitignore'), `${ENV_FILE}\nbuild/\n`);
  fs.mkdirSync(path.join(repo, 'src', 'lib'), { recursive: true });
  fs.writeFileSync(path.join(repo, 'src', 'app.txt'), 'app\n');
  fs.writeFileSync(path.join(repo, 'src', 'lib', 'util.txt'), 'util\n');
  git(repo, 'add', '--', '.gitignore', 'src');
  git(repo, 'commit', '-q', '-m', 'src and ignores', '--', '.gitignore', 'src');
  fs.writeFileSync(path.join(repo, ENV_FILE), ENV_CONTENT);
  fs.mkdirSync(path.join(repo, 'build'));
  fs.writeFileSync(path.join(repo, BUILD_FILE), 'built\n');
  const ignored = git(repo, 'ls-files', '-z', '--others', '--ignored', '--exclude-standard').split('\0');
  const tracked = git(repo, 'ls-files', '-z').split('\0').filter(Boolean);
  const committed = Object.fromEntries(tracked.map((file) => [file, git(repo, 'show', `HEAD:${file}`)]));
  const commands = [
    AGENT_WRITE,
    DESTRUCTIVE[0].command,
    STASHED_EDIT,
    DESTRUCTIVE[1].command,
    DESTRUCTIVE[2].command,
    DRAFT,
    options.rm ?? DESTRUCTIVE[3].command,
  ];
  return {
    commands,
    start: exactTree(repo),
    content: inventory(repo),
    keptIgnored: ignored.filter((f) => f !== '').sort(),
    committed,
  };
}

type Tree = 'beforeReset' | 'beforeStash' | 'beforeClean' | 'beforeRm' | 'end';

/** The tree just before each destructive command, and at the end of the turn, worked out from the start. */
export function expectedTrees(world: CheckpointWorld): Record<Tree, Record<string, string>> {
  const committed = (file: string) => world.committed[file];
  const beforeReset = { ...world.start, 'src.txt': `${committed('src.txt')}agent\n` };
  // git reset --hard: every tracked file back to HEAD; untracked and ignored files stay.
  const afterReset = { ...world.start, 'README.md': committed('README.md'), 'src.txt': committed('src.txt') };
  const beforeStash = { ...afterReset, 'README.md': `${committed('README.md')}stash me\n` };
  // git stash: the tracked edit goes into the stash.
  const beforeClean = afterReset;
  // git clean -fdx: every untracked and ignored file goes; then the agent writes a draft into src/.
  const afterClean = Object.fromEntries(Object.entries(beforeClean).filter(([file]) => file in world.committed));
  const beforeRm = { ...afterClean, 'src/draft.txt': 'draft\n' };
  const end = Object.fromEntries(Object.entries(beforeRm).filter(([file]) => !file.startsWith('src/')));
  return { beforeReset, beforeStash, beforeClean, beforeRm, end };
}

interface Checkpoint {
  id: string;
  label: string;
  turnId: string;
  savedFiles: number;
}

/**
 * After the agent ran `world.commands` in one turn (`turnId`), with `seen` the shell commands its pre-tool event
 * reported: the tree is the one the commands leave; there is one checkpoint per destructive command; restoring them
 * one by one, the latest first (`undo --before-command`, the shipped CLI), gives the exact tree just before each
 * command — the user's edit, the untracked file, the agent's own edits and the ignored `.env` included; then the
 * turn's own Undo gives the exact tree the turn started from; and nothing is lost.
 */
export function assertEachCheckpointRestores(
  sandbox: Sandbox,
  world: CheckpointWorld,
  turnId: string,
  seen: unknown[],
): void {
  const { repo } = sandbox;
  assert.deepEqual(seen, world.commands, 'the pre-tool event reported every shell command, in order');
  const trees = expectedTrees(world);
  assert.deepEqual(exactTree(repo), trees.end, 'the commands ran: the tree the turn ends with');

  const list = avhJson<Checkpoint[]>(sandbox, ['checkpoints']);
  assert.deepEqual(
    list.map((k) => [k.label, k.turnId]),
    DESTRUCTIVE.map((d) => [d.label, turnId]),
    'one checkpoint per destructive command, in the turn',
  );
  const [reset, stash, clean, rm] = list;
  assert.equal(clean.savedFiles, world.keptIgnored.length, `git clean -x: the ignored files kept`);

  avhJson(sandbox, ['undo', '--before-command', rm.id]);
  assert.deepEqual(exactTree(repo), trees.beforeRm, 'just before rm -rf src: the draft and the tracked files of src/');

  const broughtBack = avhJson<{ broughtBack: number }>(sandbox, ['undo', '--before-command', clean.id]).broughtBack;
  assert.equal(broughtBack, world.keptIgnored.length, 'the ignored files git clean -x deleted are written back');
  assert.deepEqual(
    exactTree(repo),
    trees.beforeClean,
    'just before git clean -fdx: the untracked file, the ignored .env and the ignored build folder',
  );
  assert.equal(exactTree(repo)[ENV_FILE], ENV_CONTENT);
  assert.equal(exactTree(repo)[BUILD_FILE], 'built\n');

  avhJson(sandbox, ['undo', '--before-command', stash.id]);
  assert.deepEqual(exactTree(repo), trees.beforeStash, 'just before git stash: the stashed edit');

  avhJson(sandbox, ['undo', '--before-command', reset.id]);
  assert.deepEqual(
    exactTree(repo),
    trees.beforeReset,
    'just before git reset --hard: the user’s edit, the untracked file and the agent’s edit',
  );

  const undo = avhJson<{ result: string; turnId: string }>(sandbox, ['undo', '--turn', turnId, '--yes']);
  assert.deepEqual([undo.result, undo.turnId], ['restored', turnId]);
  assert.deepEqual(exactTree(repo), world.start, 'the turn’s own Undo: the exact tree it started from');
  assertNothingLost(repo, world.content);
}

/**
 * `connect <agent> --guard-destructive` stopped `label` (the caller checks the command never ran: the exact tree):
 * the agent's next model request (`request`, its whole body) carries our reason — what was recognised and the
 * checkpoint taken all the same, which is the turn's only one — and, where our hooks are timed (`event` not null:
 * opencode runs them from our plugin, untimed), only the pre-tool `event` printed (the deny answer); none failed.
 */
export function assertGuardDenied(
  sandbox: Sandbox,
  options: { request: unknown; label: string; turnId: string; event: string | null },
): void {
  const body = JSON.stringify(options.request);
  const reason = new RegExp(`Agent Version History stopped this command: \`${options.label}\` can destroy work`);
  assert.match(body, reason, 'the model’s next request carries the refusal with our reason');
  const list = avhJson<Checkpoint[]>(sandbox, ['checkpoints']);
  assert.deepEqual(
    list.map((k) => [k.label, k.turnId]),
    [[options.label, options.turnId]],
    'the checkpoint is taken all the same',
  );
  assert.ok(body.includes(`undo --before-command ${list[0].id}`), 'the reason names the checkpoint');
  if (options.event === null) return;
  const timings = hookTimings(sandbox);
  assert.ok(timings.length > 0, 'our hooks ran');
  for (const t of timings) assert.equal(t.code, 0, `${t.event}: our hook exited ${t.code}`);
  assert.deepEqual(
    timings.filter((t) => t.stdoutBytes > 0).map((t) => t.event),
    [options.event],
    'only the destructive command’s pre-tool hook printed (the deny answer)',
  );
}
