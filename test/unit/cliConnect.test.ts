import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { CLI, runCliProcess } from '../support/cliProcess';
import { eventually } from '../support/eventually';
import {
  assertNothingLost,
  cleanupTempDirs,
  contentInventory,
  git,
  makeRepo,
  read,
  tempDir,
  testGitEnv,
  write,
} from '../support/gitFixtures';

const EVENTS = ['UserPromptSubmit', 'Stop', 'StopFailure', 'SessionEnd', 'PostToolUse', 'PreToolUse'];
/**
 * What connect must write: this Node and this CLI's compiled entry, by absolute path, started without
 * NODE_EXTRA_CA_CERTS (installation.ts, HOOK_UNSET_ENV; these tests run on POSIX).
 */
const ourCommand = (agent: string) => `env -u NODE_EXTRA_CA_CERTS ${process.execPath} ${CLI} hook ${agent}`;
const OUR_COMMAND = ourCommand('claude-code');
/** The command of one of Claude Code's events: tool events carry `--tool` after the other options (issue 34). */
const TOOL_EVENTS = new Set(['PostToolUse', 'PreToolUse']);
const ourCommandFor = (event: string, options = '') =>
  `${OUR_COMMAND}${options}${TOOL_EVENTS.has(event) ? ' --tool' : ''}`;

// Another tool's hooks and unrelated settings, in a style our writer would not produce (4-space indent, inline objects).
const ORIGINAL = `{
    "model": "opus",
    "env": { "API_TOKEN": "secret-token-123" },
    "permissions": {
        "allow": ["Bash(npm test)"]
    },
    "hooks": {
        "Stop": [{ "hooks": [{ "type": "command", "command": "other-tool on-stop" }] }],
        "PreToolUse": [
            {
                "matcher": "Bash",
                "hooks": [{ "type": "command", "command": "other-tool check" }]
            }
        ]
    }
}
`;

interface HookGroup {
  matcher?: string;
  hooks: { type: string; command: string }[];
}
type Settings = { hooks: Record<string, HookGroup[]> } & Record<string, unknown>;

function commandsOf(settings: Settings, event: string): string[] {
  return (settings.hooks[event] ?? []).flatMap((g) => g.hooks.map((h) => h.command));
}

/**
 * The agents' own variables for their user folders, blanked: a test's `--user` must land in its temp HOME, never in
 * the folders of the agent that may be running these tests.
 */
const NO_AGENT_HOMES = {
  CLAUDE_CONFIG_DIR: '',
  CODEX_HOME: '',
  COPILOT_HOME: '',
  GEMINI_CLI_HOME: '',
  XDG_CONFIG_HOME: '',
};

function cliIn(repo: string, home: string, ...args: string[]) {
  return cliWith(repo, home, {}, ...args);
}

function cliWith(repo: string, home: string, env: NodeJS.ProcessEnv, ...args: string[]) {
  return runCliProcess(args, { cwd: repo, env: { ...NO_AGENT_HOMES, HOME: home, ...env } });
}

/** A file's bytes with the JSON re-read, for shape checks. */
function jsonOf<T>(file: string): T {
  return JSON.parse(fs.readFileSync(file, 'utf8')) as T;
}

/** Imports an ES module file (the opencode plugin) from this CommonJS test. */
const importModule = new Function('url', 'return import(url)') as (url: string) => Promise<Record<string, unknown>>;

describe('CLI connect / disconnect (real settings files, real processes)', function () {
  this.timeout(60_000);
  afterEach(cleanupTempDirs);

  it("adds ours once beside another tool's hooks, keeps everything else; again → untouched; disconnect → the original bytes", () => {
    const repo = makeRepo();
    const home = tempDir('avh-home-');
    write(repo, '.claude/settings.json', ORIGINAL);
    const file = path.join(repo, '.claude/settings.json');
    const before = contentInventory(repo);

    const first = cliIn(repo, home, 'connect', 'claude-code');
    assert.equal(first.code, 0, first.stderr);
    assert.match(
      first.stdout,
      new RegExp(`^Connected Claude Code in ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\(project settings\\):\n`),
    );
    for (const event of EVENTS) assert.match(first.stdout, new RegExp(`\\n  added  ${event} hook\\n`));
    assert.ok(first.stdout.includes(`Hook command: ${OUR_COMMAND}\n`));
    const connected = JSON.parse(read(repo, '.claude/settings.json')) as Settings;
    const original = JSON.parse(ORIGINAL) as Settings;
    for (const event of EVENTS)
      assert.deepEqual(
        commandsOf(connected, event).filter((c) => c === ourCommandFor(event)),
        [ourCommandFor(event)],
        event,
      );
    assert.deepEqual(commandsOf(connected, 'Stop'), ['other-tool on-stop', OUR_COMMAND]);
    // The other tool's PreToolUse group stays as it was; ours is a group of its own after it (issue 34).
    assert.deepEqual(connected.hooks.PreToolUse.slice(0, -1), original.hooks.PreToolUse);
    assert.deepEqual(Object.keys(connected), Object.keys(original));
    for (const key of ['model', 'env', 'permissions']) assert.deepEqual(connected[key], original[key]);
    const text = read(repo, '.claude/settings.json');
    // Other content keeps its bytes: the original's lines all survive, in order, with their 4-space indentation.
    assert.ok(
      text.startsWith(ORIGINAL.slice(0, ORIGINAL.indexOf('"Stop"'))),
      'everything before the first edit is byte-identical',
    );
    assert.match(
      text,
      /\n {8}"UserPromptSubmit": \[\n {12}\{\n {16}"hooks": \[/,
      "new entries use the file's indentation",
    );

    const stat = fs.statSync(file);
    const second = cliIn(repo, home, 'connect', 'claude-code');
    assert.equal(second.code, 0, second.stderr);
    assert.match(second.stdout, /^Claude Code is already connected in .*; nothing changed\.\n$/);
    assert.equal(read(repo, '.claude/settings.json'), text);
    const again = fs.statSync(file);
    assert.equal(again.ino, stat.ino, 'not rewritten');
    assert.equal(again.mtimeMs, stat.mtimeMs, 'not rewritten');

    const off = cliIn(repo, home, 'disconnect', 'claude-code', '--json');
    assert.equal(off.code, 0, off.stderr);
    const result = JSON.parse(off.stdout) as { changed: boolean; changes: { event: string; action: string }[] };
    assert.equal(result.changed, true);
    assert.deepEqual(
      result.changes,
      EVENTS.map((event) => ({ event, action: 'removed' })),
    );
    assert.equal(read(repo, '.claude/settings.json'), ORIGINAL);
    const noop = cliIn(repo, home, 'disconnect', 'claude-code');
    assert.match(noop.stdout, /^Claude Code is not connected in .*; nothing changed\.\n$/);
    assertNothingLost(repo, before);
  });

  it('--dry-run shows the change and writes nothing; --local writes settings.local.json; a second scope is pointed out', () => {
    const repo = makeRepo();
    const home = tempDir('avh-home-');
    const dry = cliIn(repo, home, 'connect', 'claude-code', '--local', '--dry-run');
    assert.equal(dry.code, 0, dry.stderr);
    assert.match(
      dry.stdout,
      /^Would connect Claude Code in .*settings\.local\.json \(local project settings\):\n {2}added {2}UserPromptSubmit hook\n/,
    );
    assert.match(dry.stdout, /\nDry run: nothing was written\.\n$/);
    assert.equal(fs.existsSync(path.join(repo, '.claude')), false);

    assert.equal(cliIn(repo, home, 'connect', 'claude-code', '--local').code, 0);
    const local = JSON.parse(read(repo, '.claude/settings.local.json')) as Settings;
    assert.deepEqual(
      EVENTS.map((e) => commandsOf(local, e)),
      EVENTS.map((e) => [ourCommandFor(e)]),
    );
    assert.ok(read(repo, '.claude/settings.local.json').endsWith('}\n'), 'a new file ends with a newline');

    const user = cliIn(repo, home, 'connect', 'claude-code', '--user', '--json');
    assert.equal(user.code, 0, user.stderr);
    const json = JSON.parse(user.stdout) as { file: string; scope: string; alsoConnectedIn: string[] };
    assert.equal(json.file, path.join(home, '.claude/settings.json'));
    assert.deepEqual(json.alsoConnectedIn, [path.join(repo, '.claude/settings.local.json')]);
    const text = cliIn(repo, home, 'connect', 'claude-code', '--user');
    assert.match(
      text.stdout,
      /Note: .*settings\.local\.json also runs agent-versions for Claude Code, so every hook would run twice\. Remove it with: agent-versions disconnect claude-code --local/,
    );
  });

  it('the hook command written runs this installation: a prompt through it begins a real turn', () => {
    const repo = makeRepo();
    const home = tempDir('avh-home-');
    assert.equal(cliIn(repo, home, 'connect', 'claude-code', '--user').code, 0);
    const settings = JSON.parse(fs.readFileSync(path.join(home, '.claude/settings.json'), 'utf8')) as Settings;
    const command = commandsOf(settings, 'UserPromptSubmit')[0];
    assert.equal(command, OUR_COMMAND, 'node and the CLI by absolute path: no PATH lookup of agent-versions');
    // Claude Code runs hook commands through a shell, from any directory.
    const event = JSON.stringify({
      hook_event_name: 'UserPromptSubmit',
      session_id: 's-connect',
      cwd: repo,
      prompt: 'hello',
    });
    const r = spawnSync('/bin/sh', ['-c', command], { cwd: home, input: event, encoding: 'utf8', env: testGitEnv() });
    assert.equal(r.status, 0, r.stderr);
    const status = JSON.parse(runCliProcess(['status', '--json'], { cwd: repo }).stdout) as {
      runningTurns: { chatId: string }[];
    };
    assert.deepEqual(
      status.runningTurns.map((t) => t.chatId),
      ['s-connect'],
    );
  });

  it('the hook command written starts Node without NODE_EXTRA_CA_CERTS: a bundle Node cannot read is never opened (the plain command warns about it)', () => {
    const repo = makeRepo();
    const home = tempDir('avh-home-');
    assert.equal(cliIn(repo, home, 'connect', 'claude-code', '--local').code, 0);
    const command = commandsOf(JSON.parse(read(repo, '.claude/settings.local.json')) as Settings, 'Stop')[0];
    // Node warns on stderr at start when it cannot load the bundle the variable names: the proof it tried.
    const env = { ...testGitEnv(), NODE_EXTRA_CA_CERTS: path.join(home, 'no-such-bundle.pem') };
    const event = JSON.stringify({ hook_event_name: 'Stop', session_id: 's-ca', cwd: repo });
    const plain = spawnSync('/bin/sh', ['-c', `${process.execPath} ${CLI} hook claude-code`], {
      cwd: repo,
      input: event,
      encoding: 'utf8',
      env,
    });
    assert.equal(plain.status, 0, plain.stderr);
    assert.match(plain.stderr, /Ignoring extra certs from .*no-such-bundle\.pem/);
    const ours = spawnSync('/bin/sh', ['-c', command], { cwd: repo, input: event, encoding: 'utf8', env });
    assert.equal(ours.status, 0, ours.stderr);
    assert.equal(ours.stderr, '');
  });

  it('connect --init: the command ends with --init and creates the repository on the first prompt; again → unchanged; without it → updated; hand-written --init entries are ours', () => {
    const home = tempDir('avh-home-');
    const folder = tempDir('avh-no-git-');
    const repo = makeRepo();
    const first = cliIn(repo, home, 'connect', 'claude-code', '--user', '--init', '--json');
    assert.equal(first.code, 0, first.stderr);
    assert.equal((JSON.parse(first.stdout) as { command: string }).command, `${OUR_COMMAND} --init`);
    const file = path.join(home, '.claude/settings.json');
    const settings = () => JSON.parse(fs.readFileSync(file, 'utf8')) as Settings;
    for (const event of EVENTS)
      assert.deepEqual(commandsOf(settings(), event), [ourCommandFor(event, ' --init')], event);
    // Through a shell, in a folder without git: the repository is created and the turn begins.
    const event = JSON.stringify({
      hook_event_name: 'UserPromptSubmit',
      session_id: 's-init',
      cwd: folder,
      prompt: 'start a project',
    });
    const r = spawnSync('/bin/sh', ['-c', commandsOf(settings(), 'UserPromptSubmit')[0]], {
      cwd: folder,
      input: event,
      encoding: 'utf8',
      env: testGitEnv(),
    });
    assert.equal(r.status, 0, r.stderr);
    assert.ok(fs.existsSync(path.join(folder, '.git')), 'the hook ran git init');
    const status = JSON.parse(runCliProcess(['status', '--json'], { cwd: folder }).stdout) as {
      runningTurns: { chatId: string }[];
    };
    assert.deepEqual(
      status.runningTurns.map((t) => t.chatId),
      ['s-init'],
    );
    const bytes = fs.readFileSync(file, 'utf8');
    assert.match(cliIn(repo, home, 'connect', 'claude-code', '--user', '--init').stdout, /already connected/);
    assert.equal(fs.readFileSync(file, 'utf8'), bytes, 'untouched');
    const plain = JSON.parse(cliIn(repo, home, 'connect', 'claude-code', '--user', '--json').stdout) as {
      changes: { action: string }[];
    };
    assert.deepEqual(
      plain.changes.map((c) => c.action),
      EVENTS.map(() => 'updated'),
    );
    for (const event of EVENTS) assert.deepEqual(commandsOf(settings(), event), [ourCommandFor(event)], event);
    // The README's older hand-written form with --init, of an installation that moved: connect updates it in place, disconnect removes it.
    fs.writeFileSync(
      file,
      JSON.stringify({
        hooks: {
          UserPromptSubmit: [
            { hooks: [{ type: 'command', command: '/usr/bin/node /path/to/dist/cli.js hook claude-code --init' }] },
          ],
        },
      }),
    );
    const updated = JSON.parse(cliIn(repo, home, 'connect', 'claude-code', '--user', '--init', '--json').stdout) as {
      changes: { event: string; action: string }[];
    };
    assert.deepEqual(
      updated.changes.find((c) => c.event === 'UserPromptSubmit'),
      { event: 'UserPromptSubmit', action: 'updated' },
    );
    assert.deepEqual(commandsOf(settings(), 'UserPromptSubmit'), [`${OUR_COMMAND} --init`], 'one entry, not two');
    assert.equal(cliIn(repo, home, 'disconnect', 'claude-code', '--user').code, 0);
    assert.equal(
      fs.readFileSync(file, 'utf8'),
      '{}',
      'every entry of ours removed (the file had no final newline, and still has none)',
    );
  });

  it('connect codex: .codex/hooks.json gets UserPromptSubmit, Stop, Interrupt, SessionEnd (no StopFailure); it says what to do in Codex; its command records a codex turn; --local is refused', () => {
    const repo = makeRepo();
    const home = tempDir('avh-home-');
    const local = cliIn(repo, home, 'connect', 'codex', '--local');
    assert.equal(local.code, 2);
    assert.match(local.stderr, /^agent-versions: Codex has no local project settings file; use --project or --user\n/);
    assert.ok(!fs.existsSync(path.join(repo, '.codex')), 'nothing written');
    const first = cliIn(repo, home, 'connect', 'codex');
    assert.equal(first.code, 0, first.stderr);
    assert.match(
      first.stdout,
      /^Connected Codex in .*\.codex\/hooks\.json \(project settings\):\n {2}added {2}UserPromptSubmit hook\n {2}added {2}Stop hook\n {2}added {2}Interrupt hook\n {2}added {2}SessionEnd hook\n/,
    );
    assert.match(first.stdout, /use --user to keep it to yourself/);
    // What Codex 0.171 needs before it runs any of them (test/agents/codex.agent.test.ts drives the real review).
    assert.match(
      first.stdout,
      /\nThen, in Codex:\n {2}- Codex reads a project’s hooks only in a trusted project: .*`codex exec --trust`/,
    );
    assert.match(
      first.stdout,
      /\n {2}- Codex runs a hook only after you review it: start `codex` here and choose “Trust all and continue”/,
    );
    const settings = JSON.parse(read(repo, '.codex/hooks.json')) as Settings;
    assert.deepEqual(Object.keys(settings.hooks), [
      'UserPromptSubmit',
      'Stop',
      'Interrupt',
      'SessionEnd',
      'PostToolUse',
      'PreToolUse',
    ]);
    const command = commandsOf(settings, 'UserPromptSubmit')[0];
    assert.equal(command, ourCommand('codex'));
    assert.equal(
      cliIn(repo, home, 'connect', 'codex').stdout.split('\n')[0],
      `Codex is already connected in ${path.join(repo, '.codex/hooks.json')} (project settings); nothing changed.`,
    );
    const event = JSON.stringify({
      hook_event_name: 'UserPromptSubmit',
      session_id: 'thread-1',
      turn_id: 't1',
      cwd: repo,
      prompt: 'hello',
    });
    const r = spawnSync('/bin/sh', ['-c', command], { cwd: home, input: event, encoding: 'utf8', env: testGitEnv() });
    assert.equal(r.status, 0, r.stderr);
    const status = JSON.parse(runCliProcess(['status', '--json'], { cwd: repo }).stdout) as {
      runningTurns: { chatId: string; agent: string }[];
    };
    assert.deepEqual(
      status.runningTurns.map((t) => [t.chatId, t.agent]),
      [['codex:thread-1', 'codex']],
    );
    assert.equal(cliIn(repo, home, 'disconnect', 'codex').code, 0);
    assert.equal(read(repo, '.codex/hooks.json'), '{}\n');
  });

  it('connect codex again over an older connect: its StopFailure entry (not a Codex event) goes, Interrupt and SessionEnd are added', () => {
    const repo = makeRepo();
    const home = tempDir('avh-home-');
    const old = {
      hooks: Object.fromEntries(
        ['UserPromptSubmit', 'Stop', 'StopFailure'].map((e) => [
          e,
          [{ hooks: [{ type: 'command', command: ourCommand('codex') }] }],
        ]),
      ),
    };
    write(repo, '.codex/hooks.json', `${JSON.stringify(old, null, 2)}\n`);
    const r = cliIn(repo, home, 'connect', 'codex', '--json');
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual((JSON.parse(r.stdout) as { changes: unknown[] }).changes, [
      { event: 'StopFailure', action: 'removed' },
      { event: 'Interrupt', action: 'added' },
      { event: 'SessionEnd', action: 'added' },
      { event: 'PostToolUse', action: 'added' },
      { event: 'PreToolUse', action: 'added' },
    ]);
    const settings = JSON.parse(read(repo, '.codex/hooks.json')) as Settings;
    assert.deepEqual(Object.keys(settings.hooks), [
      'UserPromptSubmit',
      'Stop',
      'Interrupt',
      'SessionEnd',
      'PostToolUse',
      'PreToolUse',
    ]);
  });

  it('connect codex --user writes $CODEX_HOME/hooks.json (where Codex reads it), ~/.codex/hooks.json without the variable', () => {
    const repo = makeRepo();
    const home = tempDir('avh-home-');
    const codexHome = tempDir('avh-codex-home-');
    const r = JSON.parse(
      cliWith(repo, home, { CODEX_HOME: codexHome }, 'connect', 'codex', '--user', '--json').stdout,
    ) as {
      file: string;
      inAgent: string[];
    };
    assert.equal(r.file, path.join(codexHome, 'hooks.json'));
    assert.deepEqual(Object.keys(jsonOf<Settings>(r.file).hooks), [
      'UserPromptSubmit',
      'Stop',
      'Interrupt',
      'SessionEnd',
      'PostToolUse',
      'PreToolUse',
    ]);
    assert.equal(r.inAgent.length, 1, 'no project trust needed for user hooks; the review is');
    assert.ok(!fs.existsSync(path.join(home, '.codex')));
    const plain = JSON.parse(cliIn(repo, home, 'connect', 'codex', '--user', '--json').stdout) as { file: string };
    assert.equal(plain.file, path.join(home, '.codex/hooks.json'));
  });

  it('Claude Code: the SessionEnd entry gets a timeout (Claude Code kills SessionEnd hooks after 1.5 s without one); an older entry without it is updated in place', () => {
    const repo = makeRepo();
    const home = tempDir('avh-home-');
    assert.equal(cliIn(repo, home, 'connect', 'claude-code').code, 0);
    const file = path.join(repo, '.claude/settings.json');
    const hooks = jsonOf<{ hooks: Record<string, { hooks: Record<string, unknown>[] }[]> }>(file).hooks;
    assert.deepEqual(hooks.SessionEnd[0].hooks[0], { type: 'command', command: OUR_COMMAND, timeout: 10 });
    assert.deepEqual(hooks.Stop[0].hooks[0], { type: 'command', command: OUR_COMMAND });
    const older = read(repo, '.claude/settings.json').replace(/,\n\s*"timeout": 10/, '');
    write(repo, '.claude/settings.json', older);
    const again = JSON.parse(cliIn(repo, home, 'connect', 'claude-code', '--json').stdout) as { changes: unknown[] };
    assert.deepEqual(again.changes, [{ event: 'SessionEnd', action: 'updated' }]);
    assert.deepEqual(jsonOf<typeof hooks & object>(file), { hooks });
  });

  it('connect copilot: a file of our own, .github/hooks/agent-versions.json (PascalCase events, version 1), then the folder-trust step; disconnect deletes it', () => {
    const repo = makeRepo();
    const home = tempDir('avh-home-');
    const before = contentInventory(repo);
    const first = cliIn(repo, home, 'connect', 'copilot');
    assert.equal(first.code, 0, first.stderr);
    assert.match(
      first.stdout,
      /^Connected GitHub Copilot in .*\.github\/hooks\/agent-versions\.json \(project settings\):\n/,
    );
    assert.match(
      first.stdout,
      /\nThen, in GitHub Copilot:\n {2}- Copilot CLI runs a project’s hooks only in a folder you trust/,
    );
    const file = path.join(repo, '.github/hooks/agent-versions.json');
    const written = jsonOf<Settings & { version: number }>(file);
    assert.equal(written.version, 1);
    assert.deepEqual(Object.keys(written.hooks), [
      'UserPromptSubmit',
      'Stop',
      'SessionEnd',
      'PostToolUse',
      'PreToolUse',
    ]);
    assert.deepEqual(commandsOf(written, 'Stop'), [ourCommand('copilot')]);
    assert.ok(read(repo, '.github/hooks/agent-versions.json').endsWith('}\n'));
    const user = JSON.parse(
      cliWith(repo, home, { COPILOT_HOME: path.join(home, 'copilot-home') }, 'connect', 'copilot', '--user', '--json')
        .stdout,
    ) as { file: string };
    assert.equal(user.file, path.join(home, 'copilot-home/hooks/agent-versions.json'));
    const off = JSON.parse(cliIn(repo, home, 'disconnect', 'copilot', '--json').stdout) as { removedFile: boolean };
    assert.equal(off.removedFile, true);
    assert.ok(!fs.existsSync(file), 'our own file goes once nothing of ours is left');
    // A file the user added to keeps what they added.
    assert.equal(cliIn(repo, home, 'connect', 'copilot').code, 0);
    const mine = jsonOf<Settings & Record<string, unknown>>(file);
    mine.hooks.PreToolUse = [{ hooks: [{ type: 'command', command: 'other-tool check' }] }];
    fs.writeFileSync(file, `${JSON.stringify(mine, null, 2)}\n`);
    assert.equal(cliIn(repo, home, 'disconnect', 'copilot').code, 0);
    assert.deepEqual(jsonOf(file), { version: 1, hooks: { PreToolUse: mine.hooks.PreToolUse } });
    fs.rmSync(path.join(repo, '.github'), { recursive: true });
    assertNothingLost(repo, before);
  });

  it('connect gemini: .gemini/settings.json gets BeforeAgent, AfterAgent, SessionEnd with a name and a timeout beside the user’s settings; --user honours GEMINI_CLI_HOME', () => {
    const repo = makeRepo();
    const home = tempDir('avh-home-');
    write(repo, '.gemini/settings.json', '{\n  "model": { "name": "gemini-2.5-pro" }\n}\n');
    const first = cliIn(repo, home, 'connect', 'gemini');
    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stdout, /\nThen, in Gemini CLI:\n {2}- Gemini CLI runs hooks only in a folder you trust/);
    const settings = jsonOf<Settings & { model: unknown }>(path.join(repo, '.gemini/settings.json'));
    assert.deepEqual(settings.model, { name: 'gemini-2.5-pro' });
    assert.deepEqual(Object.keys(settings.hooks), [
      'BeforeAgent',
      'AfterAgent',
      'SessionEnd',
      'AfterTool',
      'BeforeTool',
    ]);
    assert.deepEqual(settings.hooks.AfterAgent[0].hooks[0], {
      type: 'command',
      command: ourCommand('gemini'),
      name: 'agent-versions',
      timeout: 30_000,
    });
    const user = JSON.parse(
      cliWith(repo, home, { GEMINI_CLI_HOME: path.join(home, 'g') }, 'connect', 'gemini', '--user', '--json').stdout,
    ) as { file: string };
    assert.equal(user.file, path.join(home, 'g/.gemini/settings.json'));
    assert.equal(cliIn(repo, home, 'disconnect', 'gemini').code, 0);
    assert.equal(read(repo, '.gemini/settings.json'), '{\n  "model": { "name": "gemini-2.5-pro" }\n}\n');
  });

  it('connect opencode: writes the plugin, which records a real turn through the hook command when opencode calls it; a file not ours is refused; disconnect deletes it', async () => {
    const repo = makeRepo();
    const home = tempDir('avh-home-');
    const file = path.join(repo, '.opencode/plugins/agent-versions.js');
    write(repo, '.opencode/plugins/agent-versions.js', 'export const Mine = async () => ({});\n');
    const refused = cliIn(repo, home, 'connect', 'opencode');
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /agent-versions\.js exists and was not written by agent-versions\. Move it away/);
    assert.equal(read(repo, '.opencode/plugins/agent-versions.js'), 'export const Mine = async () => ({});\n');
    fs.rmSync(file);
    const first = cliIn(repo, home, 'connect', 'opencode');
    assert.equal(first.code, 0, first.stderr);
    assert.match(
      first.stdout,
      /^Connected opencode in .*agent-versions\.js \(project settings\):\n {2}added {2}chat\.message hook\n/,
    );
    assert.match(cliIn(repo, home, 'connect', 'opencode').stdout, /already connected/);
    const text = read(repo, '.opencode/plugins/agent-versions.js');
    assert.ok(text.includes(`const COMMAND = ${JSON.stringify(ourCommand('opencode'))};`));
    // What opencode does with it: the module's export, called with the project, then its hooks.
    const plugin = (await importModule(`${pathToFileURL(file).href}?t=${Date.now()}`)).AgentVersions as (ctx: {
      directory: string;
    }) => Promise<Record<string, (...args: unknown[]) => Promise<void>>>;
    const hooks = await plugin({ directory: repo });
    const parts = [
      { type: 'text', text: 'make a file' },
      { type: 'text', text: 'a note', synthetic: true },
    ];
    await hooks['chat.message']({ sessionID: 'ses_1' }, { message: { id: 'msg_1' }, parts });
    const status = () =>
      JSON.parse(runCliProcess(['status', '--json'], { cwd: repo }).stdout) as {
        runningTurns: { chatId: string; agent: string }[];
      };
    assert.deepEqual(
      status().runningTurns.map((t) => [t.chatId, t.agent]),
      [['opencode:ses_1', 'opencode']],
    );
    write(repo, 'made.txt', 'made\n');
    await hooks.event({ event: { type: 'session.idle', properties: { sessionID: 'ses_1' } } });
    assert.deepEqual(status().runningTurns, []);
    assert.equal(git(repo, 'log', '-1', '--format=%s').trim(), '[Agent] make a file');
    const off = JSON.parse(cliIn(repo, home, 'disconnect', 'opencode', '--json').stdout) as { removedFile: boolean };
    assert.equal(off.removedFile, true);
    assert.ok(!fs.existsSync(file));
  });

  it('opencode plugin: a process that exits right after session.idle, as `opencode run` does, still ends the turn (the end is not queued behind tool reports)', async () => {
    const repo = makeRepo();
    const home = tempDir('avh-home-');
    const before = contentInventory(repo);
    assert.equal(cliIn(repo, home, 'connect', 'opencode').code, 0);
    git(repo, 'add', '.opencode');
    git(repo, 'commit', '-q', '-m', 'connect opencode');
    const file = path.join(repo, '.opencode/plugins/agent-versions.js');
    // opencode's calls in a real turn (see test/agents/opencode.agent.test.ts): the prompt awaited, the tools'
    // reports and the idle not; `opencode run` then exits without waiting for its plugins.
    const script = `
      const { AgentVersions } = await import(${JSON.stringify(pathToFileURL(file).href)});
      const fs = await import('node:fs');
      const hooks = await AgentVersions({ directory: ${JSON.stringify(repo)} });
      await hooks['chat.message']({ sessionID: 'ses_x' }, { message: { id: 'msg_1' }, parts: [{ type: 'text', text: 'write three files' }] });
      for (const name of ['a.txt', 'b.txt', 'c.txt']) {
        fs.writeFileSync(${JSON.stringify(repo)} + '/' + name, name + '\\n');
        hooks['tool.execute.after']({ sessionID: 'ses_x', tool: 'write', args: { filePath: ${JSON.stringify(repo)} + '/' + name } });
      }
      hooks.event({ event: { type: 'session.idle', properties: { sessionID: 'ses_x' } } });
      process.exit(0);
    `;
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: repo, encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    const ended = await eventually(
      'the session.idle hook, started before the exit, to end the turn',
      () => git(repo, 'log', '-1', '--format=%s').trim(),
      (subject) => subject === '[Agent] write three files',
      { timeoutMs: 15_000 },
    );
    assert.equal(ended, '[Agent] write three files');
    assert.deepEqual(git(repo, 'show', '--format=', '--name-only', 'HEAD').trim().split('\n'), [
      'a.txt',
      'b.txt',
      'c.txt',
    ]);
    assertNothingLost(repo, before);
  });

  it('opencode plugin: tool.execute.before for bash resolves only once the checkpoint is taken; a harmless command or another tool takes none (issue 34)', () => {
    const repo = makeRepo();
    const home = tempDir('avh-home-');
    assert.equal(cliIn(repo, home, 'connect', 'opencode').code, 0);
    git(repo, 'add', '.opencode');
    git(repo, 'commit', '-q', '-m', 'connect opencode');
    write(repo, 'src.txt', 'agent edit\n');
    const before = contentInventory(repo);
    const file = path.join(repo, '.opencode/plugins/agent-versions.js');
    // opencode 1.18 calls it as (input: {tool, sessionID, callID}, output: {args}) and awaits it before the tool.
    const script = `
      const { execFileSync } = await import('node:child_process');
      const { AgentVersions } = await import(${JSON.stringify(pathToFileURL(file).href)});
      const hooks = await AgentVersions({ directory: ${JSON.stringify(repo)} });
      const refs = () => execFileSync('git', ['for-each-ref', 'refs/agent-versions/checkpoints'], { encoding: 'utf8' });
      await hooks['chat.message']({ sessionID: 'ses_x' }, { message: { id: 'msg_1' }, parts: [{ type: 'text', text: 'tidy' }] });
      await hooks['tool.execute.before']({ tool: 'bash', sessionID: 'ses_x', callID: 'c1' }, { args: { command: 'ls -la' } });
      await hooks['tool.execute.before']({ tool: 'write', sessionID: 'ses_x', callID: 'c2' }, { args: { filePath: 'x' } });
      const quiet = refs();
      await hooks['tool.execute.before']({ tool: 'bash', sessionID: 'ses_x', callID: 'c3' }, { args: { command: 'git reset --hard' } });
      process.stdout.write(JSON.stringify({ quiet, after: refs() }));
    `;
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: repo, encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    const refs = JSON.parse(r.stdout) as { quiet: string; after: string };
    assert.equal(refs.quiet, '', 'ls -la and the write tool take no checkpoint');
    assert.equal(
      refs.after.split('\n').filter((l) => l.includes('refs/agent-versions/checkpoints/')).length,
      1,
      'git reset --hard: one checkpoint, there when the hook resolved',
    );
    const list = JSON.parse(cliIn(repo, home, 'checkpoints', '--json').stdout) as { label: string }[];
    assert.deepEqual(
      list.map((k) => k.label),
      ['git reset --hard'],
    );
    assertNothingLost(repo, before);
  });

  it('opencode plugin with --guard-destructive: tool.execute.before throws the reason for a destructive command after its checkpoint, resolves for a harmless one (issue 34)', () => {
    const repo = makeRepo();
    const home = tempDir('avh-home-');
    const connected = cliIn(repo, home, 'connect', 'opencode', '--guard-destructive');
    assert.equal(connected.code, 0, connected.stderr);
    assert.match(connected.stdout, /our plugin throws in tool\.execute\.before/);
    git(repo, 'add', '.opencode');
    git(repo, 'commit', '-q', '-m', 'connect opencode');
    write(repo, 'src.txt', 'agent edit\n');
    const before = contentInventory(repo);
    const file = path.join(repo, '.opencode/plugins/agent-versions.js');
    const script = `
      const { AgentVersions } = await import(${JSON.stringify(pathToFileURL(file).href)});
      const hooks = await AgentVersions({ directory: ${JSON.stringify(repo)} });
      await hooks['chat.message']({ sessionID: 'ses_x' }, { message: { id: 'msg_1' }, parts: [{ type: 'text', text: 'tidy' }] });
      await hooks['tool.execute.before']({ tool: 'bash', sessionID: 'ses_x', callID: 'c1' }, { args: { command: 'ls -la' } });
      let thrown = null;
      try {
        await hooks['tool.execute.before']({ tool: 'bash', sessionID: 'ses_x', callID: 'c2' }, { args: { command: 'rm -rf src.txt' } });
      } catch (error) {
        thrown = error.message;
      }
      process.stdout.write(JSON.stringify({ thrown }));
    `;
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: repo, encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    const { thrown } = JSON.parse(r.stdout) as { thrown: string | null };
    assert.match(thrown ?? '', /^Agent Version History stopped this command: `rm -r` can destroy work/);
    const list = JSON.parse(cliIn(repo, home, 'checkpoints', '--json').stdout) as { id: string; label: string }[];
    assert.deepEqual(
      list.map((k) => k.label),
      ['rm -r'],
      'the checkpoint is taken all the same',
    );
    assert.ok(thrown!.includes(list[0].id));
    assert.equal(read(repo, 'src.txt'), 'agent edit\n');
    assertNothingLost(repo, before);
  });

  it('connect --guard-destructive says what each agent gets: its deny form, or only the checkpoint', () => {
    const repo = makeRepo();
    const home = tempDir('avh-home-');
    const claude = cliIn(repo, home, 'connect', 'claude-code', '--guard-destructive', '--json');
    assert.equal(claude.code, 0, claude.stderr);
    const json = JSON.parse(claude.stdout) as { guardDestructive: boolean; beforeToolCommand: string };
    assert.equal(json.guardDestructive, true);
    assert.equal(json.beforeToolCommand, `${OUR_COMMAND} --tool --guard-destructive`);
    const settings = JSON.parse(read(repo, '.claude/settings.json')) as Settings;
    assert.deepEqual(commandsOf(settings, 'PreToolUse'), [`${OUR_COMMAND} --tool --guard-destructive`]);
    assert.deepEqual(commandsOf(settings, 'PostToolUse'), [`${OUR_COMMAND} --tool`]);
    assert.deepEqual(commandsOf(settings, 'Stop'), [OUR_COMMAND]);
    const copilot = cliIn(repo, home, 'connect', 'copilot', '--guard-destructive');
    assert.equal(copilot.code, 0, copilot.stderr);
    assert.match(copilot.stdout, /GitHub Copilot is told not to run it .*\(preToolUse permissionDecision "deny"\)/);
    // Connecting again without the flag takes the guard away.
    const plain = JSON.parse(cliIn(repo, home, 'connect', 'claude-code', '--json').stdout) as {
      changes: { event: string; action: string }[];
    };
    assert.deepEqual(plain.changes, [{ event: 'PreToolUse', action: 'updated' }]);
  });

  it("an older installation's entry (the README recipe) is updated in place, not duplicated", () => {
    const repo = makeRepo();
    const home = tempDir('avh-home-');
    const old =
      '{\n  "hooks": {\n    "Stop": [{ "hooks": [{ "type": "command", "command": "agent-versions hook claude-code" }] }]\n  }\n}\n';
    write(repo, '.claude/settings.json', old);
    const r = cliIn(repo, home, 'connect', 'claude-code', '--json');
    assert.equal(r.code, 0, r.stderr);
    const changes = (JSON.parse(r.stdout) as { changes: { event: string; action: string }[] }).changes;
    assert.deepEqual(changes, [
      { event: 'UserPromptSubmit', action: 'added' },
      { event: 'Stop', action: 'updated' },
      { event: 'StopFailure', action: 'added' },
      { event: 'SessionEnd', action: 'added' },
      { event: 'PostToolUse', action: 'added' },
      { event: 'PreToolUse', action: 'added' },
    ]);
    const settings = JSON.parse(read(repo, '.claude/settings.json')) as Settings;
    assert.deepEqual(commandsOf(settings, 'Stop'), [OUR_COMMAND]);
    assert.ok(
      read(repo, '.claude/settings.json').startsWith(
        '{\n  "hooks": {\n    "Stop": [{ "hooks": [{ "type": "command", "command": "',
      ),
    );
    // disconnect also recognises it by shape, from any installation
    assert.equal(cliIn(repo, home, 'disconnect', 'claude-code').code, 0);
    assert.equal(read(repo, '.claude/settings.json'), '{}\n');
  });

  it('a malformed settings file: a clear error naming line and column (never its content), exit 2, file untouched', () => {
    const repo = makeRepo();
    const home = tempDir('avh-home-');
    const broken = '{\n  "env": { "API_TOKEN": "secret-token-123" },\n  "model": "opus",\n}\n';
    write(repo, '.claude/settings.json', broken);
    const r = cliIn(repo, home, 'connect', 'claude-code');
    assert.equal(r.code, 2);
    assert.equal(
      r.stderr,
      `agent-versions: ${path.join(repo, '.claude/settings.json')} is not valid JSON (line 4, column 1: PropertyNameExpected). Fix it by hand, then run the command again; nothing was changed.\n`,
    );
    assert.ok(!r.stderr.includes('secret-token-123') && !r.stdout.includes('secret-token-123'));
    assert.equal(read(repo, '.claude/settings.json'), broken);
    write(repo, '.claude/settings.json', '{ "hooks": [] }\n');
    const shape = cliIn(repo, home, 'connect', 'claude-code');
    assert.equal(shape.code, 2);
    assert.match(shape.stderr, /"hooks" is not a JSON object\. Fix it by hand/);
    assert.equal(read(repo, '.claude/settings.json'), '{ "hooks": [] }\n');
  });

  it('a read-only settings file: a clear error, exit 1, file untouched (even for root, who could write it)', () => {
    const repo = makeRepo();
    const home = tempDir('avh-home-');
    write(repo, '.claude/settings.json', ORIGINAL);
    const file = path.join(repo, '.claude/settings.json');
    fs.chmodSync(file, 0o444);
    const r = cliIn(repo, home, 'connect', 'claude-code');
    assert.equal(r.code, 1);
    assert.equal(
      r.stderr,
      `agent-versions: ${file} is read-only; make it writable (chmod u+w) and run the command again; nothing was changed.\n`,
    );
    assert.equal(read(repo, '.claude/settings.json'), ORIGINAL);
    assert.equal(fs.statSync(file).mode & 0o777, 0o444);
    assert.deepEqual(fs.readdirSync(path.dirname(file)), ['settings.json'], 'no temp file left behind');
  });

  it("keeps the file's permissions and writes through a symlink (dotfile managers) instead of replacing it", () => {
    const repo = makeRepo();
    const home = tempDir('avh-home-');
    const dotfiles = tempDir('avh-dotfiles-');
    fs.writeFileSync(path.join(dotfiles, 'claude-settings.json'), '{\n\t"model": "opus"\n}\n', { mode: 0o600 });
    fs.mkdirSync(path.join(home, '.claude'));
    fs.symlinkSync(path.join(dotfiles, 'claude-settings.json'), path.join(home, '.claude/settings.json'));
    assert.equal(cliIn(repo, home, 'connect', 'claude-code', '--user').code, 0);
    assert.ok(fs.lstatSync(path.join(home, '.claude/settings.json')).isSymbolicLink());
    const text = fs.readFileSync(path.join(dotfiles, 'claude-settings.json'), 'utf8');
    assert.match(text, /^\{\n\t"model": "opus",\n\t"hooks": \{\n\t\t"UserPromptSubmit": \[/, 'tab indentation kept');
    assert.equal(fs.statSync(path.join(dotfiles, 'claude-settings.json')).mode & 0o777, 0o600);
  });

  it('project settings outside a git repository: a clear error naming --user, nothing written', () => {
    const folder = tempDir();
    const r = runCliProcess(['connect', 'claude-code'], {
      cwd: folder,
      env: { ...NO_AGENT_HOMES, HOME: tempDir('avh-home-') },
    });
    assert.equal(r.code, 1);
    assert.match(
      r.stderr,
      /^agent-versions: Project settings belong to a git repository, and .* is not in one\. .*or use --user\.\n$/,
    );
    assert.deepEqual(fs.readdirSync(folder), []);
  });
});
