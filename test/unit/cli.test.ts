import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CONNECTABLE_AGENTS } from '../../src/cli/agents/registry';
import { synopsis } from '../../src/cli/commandHelp';
import { COMMANDS } from '../../src/cli/commandLine';
import { VersionHistory } from '../../src/core/versionHistory';
import { repoPicture } from '../support/assertions';
import { type CliRun, cliJson, runCliProcess } from '../support/cliProcess';
import {
  assertNothingLost,
  cleanupTempDirs,
  contentInventory,
  git,
  makeRepo,
  tempDir,
  write,
} from '../support/gitFixtures';

/** The shipped command (dist/cli.js), a real process, in an empty folder: a command line that does not parse touches nothing. */
function cli(args: string[], cwd = tempDir()): CliRun {
  return runCliProcess(args, { cwd });
}

const packageVersion = (
  JSON.parse(fs.readFileSync(path.resolve(__dirname, '../../../package.json'), 'utf8')) as { version: string }
).version;

describe('CLI command line: usage errors, help, --version (the shipped command, real processes)', function () {
  this.timeout(60_000);
  afterEach(cleanupTempDirs);

  // Every UsageError the command line can throw: [argv, exact first stderr line, the usage it prints under it].
  const usageErrors: [string[], string, string][] = [
    [['foo'], 'unknown command "foo"', 'Commands:'],
    [[], 'no command given', 'Commands:'],
    [['turn'], 'turn needs a subcommand: begin, end', 'Commands:'],
    [['turn', 'start'], 'unknown turn subcommand "start"; use one of: begin, end', 'Commands:'],
    [
      ['turn', 'end'],
      'turn end needs <turnId>',
      'Usage: agent-versions turn end <turnId> --outcome completed|cancelled|errored',
    ],
    [['turn', 'end', 'abc'], 'turn end needs --outcome completed|cancelled|errored', 'Usage: agent-versions turn end'],
    [['turn', 'begin'], 'turn begin needs --chat <id>', 'Usage: agent-versions turn begin --chat <id>'],
    [['turn', 'begin', '--chat'], '--chat needs a value', 'Usage: agent-versions turn begin'],
    [
      ['turn', 'begin', '--chat', '--json'],
      '--chat needs a value (to give one that starts with "-", write --chat=<value>)',
      'Usage: agent-versions turn begin',
    ],
    [
      ['turn', 'begin', '--chat', 'c', '--prompt', 'p', '--prompt-file', 'f'],
      'give only one of --prompt, --prompt-file',
      'Usage: agent-versions turn begin',
    ],
    [
      ['turn', 'begin', '--chat', 'c', 'stray words'],
      'unexpected argument "stray words"',
      'Usage: agent-versions turn begin',
    ],
    [['status', '--bogus'], 'unknown option "--bogus"', 'Usage: agent-versions status'],
    [['status', '-x'], 'unknown option "-x"', 'Usage: agent-versions status'],
    [['status', '--json=yes'], '--json takes no value', 'Usage: agent-versions status'],
    [
      ['versions', '--outcome', 'completed'],
      'versions does not take --outcome',
      'Usage: agent-versions versions [--limit <N>]',
    ],
    [
      ['versions', '--limit', 'many'],
      '--limit must be a whole number from 1 to 100000',
      'Usage: agent-versions versions',
    ],
    [['versions', '--limit', '0'], '--limit must be a whole number from 1 to 100000', 'Usage: agent-versions versions'],
    [['restore'], 'restore needs <commit>', 'Usage: agent-versions restore <commit> [--yes]'],
    [['restore', 'a', 'b'], 'unexpected argument "b"', 'Usage: agent-versions restore'],
    [
      ['recover'],
      'recover needs <action>: check, accept, save-and-accept, remove-stale-lock',
      'Usage: agent-versions recover check|accept|save-and-accept|remove-stale-lock',
    ],
    [
      ['recover', 'fix'],
      'unknown recover action "fix"; recover takes one of: check, accept, save-and-accept, remove-stale-lock',
      'Usage: agent-versions recover',
    ],
    // The agents come from the registry (agents/registry.ts): adding one does not touch this file.
    [
      ['connect'],
      `connect needs <agent>: ${CONNECTABLE_AGENTS.map((a) => a.name).join(', ')}`,
      `Usage: agent-versions connect ${CONNECTABLE_AGENTS.map((a) => a.name).join('|')} ` +
        '[--project | --local | --user] [--dry-run]',
    ],
    [
      ['connect', 'cursor'],
      `unknown agent "cursor"; connect takes one of: ${CONNECTABLE_AGENTS.map((a) => a.name).join(', ')}`,
      'Usage: agent-versions connect',
    ],
    [
      ['connect', 'codex', '--local'],
      'Codex has no local project settings file; use --project or --user',
      'Usage: agent-versions connect',
    ],
    [
      ['disconnect', 'claude-code', '--user', '--project'],
      'give only one of --project, --user',
      'Usage: agent-versions disconnect',
    ],
    [['doctor', '--limit', '3'], 'doctor does not take --limit', 'Usage: agent-versions doctor'],
    [['--version', 'status'], '--version takes no command', 'Usage: agent-versions status'],
    [['help', 'frobnicate'], 'unknown command "frobnicate"', 'Commands:'],
  ];

  for (const [argv, message, usage] of usageErrors) {
    it(`usage error: agent-versions ${argv.join(' ') || '(nothing)'} → exit 2, "${message}", usage on stderr`, () => {
      const r = cli(argv);
      assert.equal(r.code, 2);
      assert.equal(r.stdout, '');
      const [first, ...rest] = r.stderr.split('\n');
      assert.equal(first, `agent-versions: ${message}`);
      assert.ok(rest.join('\n').includes(usage), r.stderr);
      assert.doesNotMatch(r.stderr, /Unexpected/);
    });
  }

  it('a long or control-character argument is echoed short and on one line', () => {
    const r = cli([`x${'y'.repeat(100)}\u001b[31m`]);
    assert.equal(r.stderr.split('\n')[0], `agent-versions: unknown command "x${'y'.repeat(39)}…"`);
    const esc = cli(['\u001b[2Jboom']);
    assert.equal(esc.stderr.split('\n')[0], 'agent-versions: unknown command "?[2Jboom"');
  });

  it('--json also reports a usage error as JSON on stdout (reason "usage"), still exit 2', () => {
    const r = cli(['turn', 'end', '--json']);
    assert.equal(r.code, 2);
    assert.deepEqual(JSON.parse(r.stdout), { error: { reason: 'usage', message: 'turn end needs <turnId>' } });
  });

  it('a real process: unknown command and missing turn id exit 2 with the message and usage on stderr', () => {
    const unknown = runCliProcess(['foo'], { cwd: tempDir() });
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /^agent-versions: unknown command "foo"\n\nUsage: agent-versions/);
    const end = runCliProcess(['turn', 'end'], { cwd: tempDir() });
    assert.equal(end.code, 2);
    assert.match(end.stderr, /^agent-versions: turn end needs <turnId>\n\nUsage: agent-versions turn end <turnId>/);
  });

  it('hook never exits 2, even on a malformed command line (Claude Code would drop the prompt)', () => {
    for (const argv of [
      ['hook'],
      ['hook', 'cursor'],
      ['hook', 'codex'],
      ['hook', 'claude-code', '--bogus'],
      ['hook', 'claude-code', '--repo'],
      ['hook', 'codex', 'a', 'b'],
    ]) {
      const r = runCliProcess(argv, { cwd: tempDir(), input: '{}' });
      assert.equal(r.code, 1, argv.join(' '));
      assert.match(r.stderr, /^agent-versions: /);
      assert.equal(r.stdout, '', 'nothing reaches the agent context');
    }
  });

  for (const spec of COMMANDS) {
    it(`help for "${spec.name}": --help and help <command> print its options, an example and its --json shape`, () => {
      const viaFlag = cli([...spec.name.split(' '), '--help']);
      const viaHelp = cli(['help', ...spec.name.split(' ')]);
      assert.equal(viaFlag.code, 0);
      assert.equal(viaHelp.code, 0);
      assert.equal(viaFlag.stdout, viaHelp.stdout);
      assert.equal(viaFlag.stderr, '');
      const text = viaFlag.stdout;
      assert.ok(text.startsWith(`Usage: agent-versions ${synopsis(spec)}\n`), text);
      for (const option of spec.options)
        assert.match(text, new RegExp(`\\n  (-\\w, )?--${option}\\b`), `--${option} is described`);
      assert.match(text, /\nExample:\n {2}.*agent-versions /);
      assert.ok(text.includes(`With --json, prints:\n  ${spec.json}`));
    });
  }

  it('help for a group (help turn, turn --help) shows both turn commands; help alone lists every command', () => {
    const group = cli(['help', 'turn']);
    assert.match(group.stdout, /Usage: agent-versions turn begin[\s\S]*Usage: agent-versions turn end/);
    assert.equal(cli(['turn', '--help']).stdout, group.stdout);
    const all = cli(['--help']);
    assert.equal(all.code, 0);
    for (const spec of COMMANDS) assert.match(all.stdout, new RegExp(`\\n  ${spec.name} +\\S`));
    assert.equal(cli(['help']).stdout, all.stdout);
  });

  it('--version (a real process) prints the version in package.json', () => {
    const r = runCliProcess(['--version'], { cwd: tempDir() });
    assert.equal(r.code, 0);
    assert.equal(r.stdout, `agent-versions ${packageVersion}\n`);
    assert.deepEqual(cliJson<{ version: string }>(['--version'], { cwd: tempDir() }), { version: packageVersion });
  });
});

describe('CLI versions table (real git, real processes)', function () {
  this.timeout(60_000);
  afterEach(cleanupTempDirs);

  it('prints time, kind, outcome, short oid and summary; --json keeps its shape; changes nothing', async () => {
    const repo = makeRepo();
    const history = await VersionHistory.open(repo);
    let turnId: string;
    try {
      ({ turnId } = await history.beginTurn({ chatId: 'c', prompt: 'Add the greeting' }));
      write(repo, 'hello.txt', 'hi\n');
      await history.endTurn(turnId, 'completed');
    } finally {
      await history.close();
    }
    // A subject carrying a terminal escape sequence must not reach the terminal raw.
    write(repo, 'user.txt', 'mine\n');
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', 'my own \u001b[2J change');
    const before = contentInventory(repo);
    const picture = repoPicture(repo);
    const r = runCliProcess(['versions'], { cwd: repo, env: { TZ: 'UTC' } });
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.trimEnd().split('\n');
    assert.match(lines[0], /^TIME +KIND +OUTCOME +COMMIT +SUMMARY$/);
    const oids = git(repo, 'log', '--format=%H').trim().split('\n');
    const times = git(repo, 'log', '--format=%cd', '--date=format-local:%Y-%m-%d %H:%M').trim().split('\n');
    assert.equal(lines.length, 1 + oids.length);
    assert.match(lines[1], new RegExp(`^${times[0]} +Commit +${oids[0].slice(0, 10)}  my own \\?\\[2J change$`));
    assert.match(lines[2], new RegExp(`^${times[1]} +Agent +completed +${oids[1].slice(0, 10)}  Add the greeting$`));
    assert.match(lines[3], new RegExp(`^${times[2]} +Commit +${oids[2].slice(0, 10)}  initial$`));
    assert.ok(!r.stdout.includes('\u001b'));
    const json = cliJson<
      { oid: string; subject: string; kind: string; turnId?: string; outcome?: string; time: number }[]
    >(['versions'], { cwd: repo });
    assert.deepEqual(
      json.map((v) => Object.keys(v).sort()),
      [
        ['kind', 'oid', 'subject', 'time'],
        ['kind', 'oid', 'outcome', 'subject', 'time', 'turnId'],
        ['kind', 'oid', 'subject', 'time'],
      ],
    );
    assert.equal(json[1].turnId, turnId);
    assert.deepEqual(repoPicture(repo), picture);
    assertNothingLost(repo, before);
  });

  it('a branch without commits says so instead of printing an empty table', () => {
    const repo = makeRepo({ commit: false });
    const r = runCliProcess(['versions'], { cwd: repo });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, 'No versions yet: this branch has no commits.\n');
  });
});
