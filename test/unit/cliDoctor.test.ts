import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { codexTrustHash } from '../../src/cli/agents/codex';
import { CONNECTABLE_AGENTS } from '../../src/cli/agents/registry';
import { repoPicture, seedRecoveryLatch } from '../support/assertions';
import { CLI, runCliProcess } from '../support/cliProcess';
import {
  assertNothingLost,
  cleanupTempDirs,
  contentInventory,
  git,
  makeRepo,
  tempDir,
  write,
} from '../support/gitFixtures';

interface Check {
  id: string;
  status: 'ok' | 'warning' | 'problem';
  summary: string;
  fix?: string;
  facts: Record<string, unknown>;
}

interface Report {
  ok: boolean;
  checks: Check[];
}

/** The agents' own variables for their user folders, blanked: every agent's state comes from the test's HOME. */
const NO_AGENT_HOMES = {
  CLAUDE_CONFIG_DIR: '',
  CODEX_HOME: '',
  COPILOT_HOME: '',
  GEMINI_CLI_HOME: '',
  XDG_CONFIG_HOME: '',
};

function cli(args: string[], cwd: string, home: string, env: NodeJS.ProcessEnv = {}) {
  return runCliProcess(args, { cwd, env: { ...NO_AGENT_HOMES, HOME: home, ...env } });
}

function doctor(
  cwd: string,
  home: string,
  options: { text?: boolean; env?: NodeJS.ProcessEnv } = {},
): { code: number; report: Report; text: string } {
  const json = cli(['doctor', '--json'], cwd, home, options.env);
  if (!options.text) return { code: json.code, report: JSON.parse(json.stdout) as Report, text: '' };
  const text = cli(['doctor'], cwd, home, options.env);
  assert.equal(json.code, text.code, 'the same verdict with and without --json');
  return { code: json.code, report: JSON.parse(json.stdout) as Report, text: text.stdout };
}

/** One hooks line per agent the registry lists (agents/registry.ts): a new agent does not touch this file. */
const HOOK_CHECKS = CONNECTABLE_AGENTS.map((a) => `hooks:${a.name}`);
const CONVERSATION_CHECKS = CONNECTABLE_AGENTS.map((a) => `chat:${a.name}`);

const check = (report: Report, id: string): Check => {
  const found = report.checks.find((c) => c.id === id);
  assert.ok(found, `check ${id} is reported`);
  return found;
};

describe('CLI doctor (real git, real state files, a real hook process)', function () {
  this.timeout(120_000);
  afterEach(cleanupTempDirs);

  it('a healthy repository: every line ok or warning, exit 0; git, state and hook latency are measured; nothing changes', () => {
    const repo = makeRepo();
    const home = tempDir('avh-home-');
    assert.equal(runCliProcess(['turn', 'begin', '--chat', 'c', '--prompt', 'p'], { cwd: repo }).code, 0);
    const before = contentInventory(repo);
    const picture = repoPicture(repo);
    const { code, report, text } = doctor(repo, home, { text: true });
    assert.equal(code, 0, text);
    assert.equal(report.ok, true);
    assert.deepEqual(
      report.checks.map((c) => c.id),
      ['git', 'repository', 'identity', 'state', 'recovery', ...HOOK_CHECKS, ...CONVERSATION_CHECKS, 'hook-latency'],
    );
    const gitCheck = check(report, 'git');
    assert.equal(gitCheck.status, 'ok');
    assert.ok(path.isAbsolute(gitCheck.facts.path as string));
    assert.match(gitCheck.facts.version as string, /^\d+\.\d+/);
    assert.equal(gitCheck.facts.tested, '2.39');
    assert.equal(check(report, 'repository').status, 'ok');
    assert.match(check(report, 'repository').summary, /: clean, on main at [0-9a-f]{10}$/);
    assert.equal(check(report, 'identity').status, 'ok');
    const state = check(report, 'state');
    assert.equal(state.status, 'ok');
    assert.equal(state.facts.turns, 1);
    assert.equal(state.facts.runningTurns, 1);
    assert.ok((state.facts.snapshotBytes as number) > 0);
    assert.equal(check(report, 'recovery').summary, 'not required');
    const hooks = check(report, 'hooks:claude-code');
    assert.equal(hooks.status, 'warning');
    assert.equal(hooks.summary, 'Claude Code: not connected.');
    assert.match(hooks.fix!, /^agent-versions connect claude-code/);
    // Conversation rollback (issue 32): Copilot CLI has no way to continue from an earlier turn, whatever is installed.
    const copilotRollback = check(report, 'chat:copilot');
    assert.deepEqual([copilotRollback.status, copilotRollback.facts.available], ['ok', false]);
    assert.match(copilotRollback.summary, /not available; the agent is told of an Undo/);
    const latency = check(report, 'hook-latency');
    assert.equal(latency.facts.exitCode, 0);
    assert.equal(typeof latency.facts.ms, 'number');
    assert.notEqual(latency.status, 'problem');
    // One line per check, with its status word; the fix indented under it.
    assert.match(text, /^ok {7}git {16}git \d+\.\d+/m);
    assert.match(
      text,
      /^warning {2}hooks:claude-code {2}Claude Code: not connected\.\n {28}fix: agent-versions connect claude-code/m,
    );
    assert.deepEqual(repoPicture(repo), picture, 'doctor changes nothing in the repository');
    assertNothingLost(repo, before);
  });

  it('a stale index.lock: the repository line is a problem with the fix, exit 1', () => {
    const repo = makeRepo();
    fs.writeFileSync(path.join(repo, '.git', 'index.lock'), '');
    const picture = repoPicture(repo);
    const { code, report } = doctor(repo, tempDir('avh-home-'));
    assert.equal(code, 1);
    assert.equal(report.ok, false);
    const r = check(report, 'repository');
    assert.equal(r.status, 'problem');
    assert.equal(r.facts.blocker, 'index-locked');
    assert.match(r.fix!, /index\.lock is held.*remove \.git\/index\.lock if no Git process is running/);
    assert.ok(fs.existsSync(path.join(repo, '.git', 'index.lock')), 'a lock that is not ours is never removed');
    assert.deepEqual(repoPicture(repo), picture);
  });

  it('recovery required: the recovery line is a problem naming the recover commands, exit 1; the latch stays', async () => {
    const repo = makeRepo();
    await seedRecoveryLatch(repo, 'op-doctor');
    const { code, report } = doctor(repo, tempDir('avh-home-'));
    assert.equal(code, 1);
    const r = check(report, 'recovery');
    assert.equal(r.status, 'problem');
    assert.match(
      r.summary,
      /^Recovery is required: an earlier restore could not be verified \(last phase update-worktree\)/,
    );
    assert.match(r.fix!, /agent-versions recover check/);
    assert.equal(check(report, 'repository').status, 'ok');
    const status = JSON.parse(runCliProcess(['status', '--json'], { cwd: repo }).stdout) as {
      recovery: { operationId: string } | null;
    };
    assert.equal(status.recovery?.operationId, 'op-doctor');
  });

  it('a folder without git: the repository line is a problem (git init), no state checks, hooks still checked; exit 1; nothing created', () => {
    const folder = tempDir();
    const { code, report, text } = doctor(folder, tempDir('avh-home-'), { text: true });
    assert.equal(code, 1);
    assert.deepEqual(
      report.checks.map((c) => [c.id, c.status]),
      [
        ['git', 'ok'],
        ['repository', 'problem'],
        ...HOOK_CHECKS.map((id) => [id, 'warning']),
        ...CONVERSATION_CHECKS.map((id) => [id, 'ok']),
      ],
    );
    assert.equal(check(report, 'repository').summary, `${folder} is not in a git repository.`);
    assert.match(check(report, 'repository').fix!, /^Run `git init`/);
    assert.match(text, new RegExp(`\\n1 problem\\(s\\), ${HOOK_CHECKS.length} warning\\(s\\)\\.\\n$`));
    assert.deepEqual(fs.readdirSync(folder), []);
  });

  it('identity: a repository where git has no identity is a warning naming the fallback identity', () => {
    const repo = makeRepo();
    git(repo, 'config', '--unset', 'user.name');
    git(repo, 'config', '--unset', 'user.email');
    git(repo, 'config', 'user.useConfigOnly', 'true');
    const { report } = doctor(repo, tempDir('avh-home-'));
    const r = check(report, 'identity');
    assert.equal(r.status, 'warning');
    assert.match(r.summary, /Agent Version History <agent-versions@localhost>/);
    assert.match(r.fix!, /git config --global user\.name/);
  });

  it('hooks: connected → ok; connected in two files → warning; a hook naming a vanished installation → problem', () => {
    const repo = makeRepo();
    const home = tempDir('avh-home-');
    assert.equal(cli(['connect', 'claude-code', '--local'], repo, home).code, 0);
    let hooks = check(doctor(repo, home).report, 'hooks:claude-code');
    assert.equal(hooks.status, 'ok');
    assert.equal(hooks.summary, `Claude Code: connected in ${path.join(repo, '.claude/settings.local.json')}`);

    assert.equal(cli(['connect', 'claude-code', '--user'], repo, home).code, 0);
    hooks = check(doctor(repo, home).report, 'hooks:claude-code');
    assert.equal(hooks.status, 'warning');
    assert.match(hooks.summary, /connected in 2 settings files .*every hook runs more than once/);

    assert.equal(cli(['disconnect', 'claude-code', '--user'], repo, home).code, 0);
    // This installation's command in its older form (no env prefix): it works, connect again writes the faster one.
    write(
      repo,
      '.claude/settings.local.json',
      JSON.stringify({
        hooks: Object.fromEntries(
          ['UserPromptSubmit', 'Stop', 'StopFailure', 'SessionEnd', 'PostToolUse', 'PreToolUse'].map((event) => [
            event,
            [{ hooks: [{ type: 'command', command: `${process.execPath} ${CLI} hook claude-code` }] }],
          ]),
        ),
      }),
    );
    hooks = check(doctor(repo, home).report, 'hooks:claude-code');
    assert.equal(hooks.status, 'warning');
    assert.equal(
      hooks.summary,
      `Claude Code: connected in ${path.join(repo, '.claude/settings.local.json')} with an older form of this installation's hook entries.`,
    );
    assert.equal(
      hooks.fix,
      'To write the current one (it starts faster, or runs longer where the agent cuts hooks short): ' +
        'agent-versions connect claude-code --local',
    );
    assert.equal(cli(['connect', 'claude-code', '--local'], repo, home).code, 0);
    assert.equal(check(doctor(repo, home).report, 'hooks:claude-code').status, 'ok');
    // connect --init's form is current too.
    assert.equal(cli(['connect', 'claude-code', '--local', '--init'], repo, home).code, 0);
    assert.equal(check(doctor(repo, home).report, 'hooks:claude-code').status, 'ok');
    // Tool events connected before `--tool` (issue 34): they work, an older form; the guard's form is current too.
    const file = path.join(repo, '.claude/settings.local.json');
    const current = fs.readFileSync(file, 'utf8');
    fs.writeFileSync(file, current.split(' --init --tool').join(' --init'));
    hooks = check(doctor(repo, home).report, 'hooks:claude-code');
    assert.equal(hooks.status, 'warning');
    assert.match(hooks.summary, /with an older form of this installation's hook entries\.$/);
    assert.match(hooks.fix!, /agent-versions connect claude-code --local --init$/);
    assert.equal(cli(['connect', 'claude-code', '--local', '--init', '--guard-destructive'], repo, home).code, 0);
    assert.ok(fs.readFileSync(file, 'utf8').includes(' --init --tool --guard-destructive"'));
    assert.equal(check(doctor(repo, home).report, 'hooks:claude-code').status, 'ok');
    fs.writeFileSync(file, fs.readFileSync(file, 'utf8').split(' --init --tool --guard').join(' --init --guard'));
    assert.match(
      check(doctor(repo, home).report, 'hooks:claude-code').fix!,
      /connect claude-code --local --init --guard-destructive$/,
    );

    const gone = '/nonexistent/agent-version-history/dist/cli.js';
    write(
      repo,
      '.claude/settings.local.json',
      JSON.stringify({
        hooks: { Stop: [{ hooks: [{ type: 'command', command: `${process.execPath} ${gone} hook claude-code` }] }] },
      }),
    );
    const { code, report } = doctor(repo, home);
    hooks = check(report, 'hooks:claude-code');
    assert.equal(code, 1);
    assert.equal(hooks.status, 'problem');
    assert.equal(hooks.summary, `Claude Code: the hook command names a file that no longer exists (${gone}).`);
    assert.equal(hooks.fix, 'agent-versions connect claude-code --local');
  });
  it('hooks: an older connect codex (StopFailure, not a Codex event; no Interrupt, no SessionEnd) is a warning naming both', () => {
    const repo = makeRepo();
    const home = tempDir('avh-home-');
    const command = JSON.parse(cli(['connect', 'codex', '--json'], repo, home).stdout) as { command: string };
    write(
      repo,
      '.codex/hooks.json',
      JSON.stringify({
        hooks: Object.fromEntries(
          ['UserPromptSubmit', 'Stop', 'StopFailure'].map((e) => [
            e,
            [{ hooks: [{ type: 'command', command: command.command }] }],
          ]),
        ),
      }),
    );
    const hooks = check(doctor(repo, home).report, 'hooks:codex');
    assert.equal(hooks.status, 'warning');
    assert.match(
      hooks.summary,
      /but not for Interrupt, SessionEnd, PostToolUse, PreToolUse, and also for StopFailure, which Codex does not send\.$/,
    );
    assert.equal(hooks.fix, 'agent-versions connect codex --project');
  });

  it("hooks: Codex's own review state, read from $CODEX_HOME/config.toml: project not trusted, not reviewed, reviewed (ok), modified, turned off", () => {
    const repo = makeRepo();
    const home = tempDir('avh-home-');
    const codexHome = tempDir('avh-codex-home-');
    const env = { CODEX_HOME: codexHome };
    const connected = JSON.parse(cli(['connect', 'codex', '--json'], repo, home, env).stdout) as {
      file: string;
      command: string;
      toolCommand: string;
      beforeToolCommand: string;
    };
    const config = path.join(codexHome, 'config.toml');
    const codexCheck = () => check(doctor(repo, home, { env }).report, 'hooks:codex');
    const events = ['UserPromptSubmit', 'Stop', 'Interrupt', 'SessionEnd', 'PostToolUse', 'PreToolUse'];
    const label = (e: string) => e.replace(/([a-z])([A-Z])/g, '$1_$2').toLowerCase();
    // The entries' own timeouts (connect writes 3 s on Interrupt and SessionEnd) are part of what Codex hashes.
    const timeouts = JSON.parse(fs.readFileSync(connected.file, 'utf8')) as {
      hooks: Record<string, { hooks: { timeout?: number }[] }[]>;
    };
    const hashOf = (e: string, command: string) => codexTrustHash(e, command, timeouts.hooks[e][0].hooks[0].timeout);
    // Tool events run the command's `--tool` form (issue 34): each entry is hashed with its own command.
    const commandOf = (e: string, command: string) =>
      e === 'PostToolUse' ? connected.toolCommand : e === 'PreToolUse' ? connected.beforeToolCommand : command;
    const reviewed = (command: string, extra = '') =>
      events
        .map(
          (e) =>
            `[hooks.state."${connected.file}:${label(e)}:0:0"]\ntrusted_hash = "${hashOf(e, commandOf(e, command))}"\n${extra}`,
        )
        .join('\n');
    let c = codexCheck();
    assert.equal(c.status, 'problem');
    assert.match(c.summary, /^Codex: connected in .*, but Codex does not trust .*, so it never reads .*hooks\.json/);
    assert.match(c.fix!, /codex exec --trust/);

    const trusted = `model = "gpt-6.2-sol"\n\n[projects."${repo}"]\ntrust_level = "trusted"\n\n`;
    fs.writeFileSync(config, trusted);
    c = codexCheck();
    assert.equal(c.status, 'problem');
    assert.match(
      c.summary,
      /Codex skips these hooks, silently \(not reviewed yet: UserPromptSubmit, Stop, Interrupt, SessionEnd, PostToolUse, PreToolUse\)/,
    );
    assert.match(c.fix!, /“Trust all and continue”/);

    fs.writeFileSync(config, trusted + reviewed(connected.command));
    c = codexCheck();
    assert.equal(c.status, 'ok', c.summary);
    assert.equal(c.summary, `Codex: connected in ${connected.file}; every hook is reviewed in Codex`);

    // Any change to the command (here connect --init) is "modified" for Codex until reviewed again.
    assert.equal(cli(['connect', 'codex', '--init'], repo, home, env).code, 0);
    c = codexCheck();
    assert.equal(c.status, 'problem');
    assert.match(c.summary, /changed since you reviewed them: UserPromptSubmit, Stop, Interrupt, SessionEnd/);
    assert.equal(cli(['connect', 'codex'], repo, home, env).code, 0);
    const off = trusted + reviewed(connected.command, 'enabled = false\n');
    fs.writeFileSync(config, off);
    assert.match(codexCheck().summary, /turned off in Codex: UserPromptSubmit/);
    assert.equal(fs.readFileSync(config, 'utf8'), off, 'read-only: the review stays Codex’s own');

    fs.writeFileSync(config, 'model = \n');
    c = codexCheck();
    assert.equal(c.status, 'warning');
    assert.match(c.summary, /could not be read as TOML/);
  });

  it("hooks: Copilot CLI's and Gemini CLI's folder trust, read from their own files: untrusted → warning, trusted → ok", () => {
    const repo = makeRepo();
    const home = tempDir('avh-home-');
    for (const agent of ['copilot', 'gemini']) assert.equal(cli(['connect', agent], repo, home).code, 0);
    let report = doctor(repo, home).report;
    assert.equal(check(report, 'hooks:copilot').status, 'warning');
    assert.match(check(report, 'hooks:copilot').summary, /Copilot CLI has not been told to trust/);
    assert.equal(check(report, 'hooks:gemini').status, 'warning');
    assert.match(check(report, 'hooks:gemini').fix!, /trust the folder/);
    write(home, '.copilot/config.json', JSON.stringify({ trustedFolders: [path.dirname(repo)] }));
    write(home, '.gemini/trustedFolders.json', JSON.stringify({ [repo]: 'TRUST_FOLDER' }));
    report = doctor(repo, home).report;
    assert.equal(check(report, 'hooks:copilot').status, 'ok', check(report, 'hooks:copilot').summary);
    assert.equal(check(report, 'hooks:gemini').status, 'ok', check(report, 'hooks:gemini').summary);
  });
});
