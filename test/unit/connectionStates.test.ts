// The states VS Code shows for each agent (src/vscode/connectionStates.ts), read from doctor's real checks of real
// settings files written by the CLI's own connect code, in a temp repository and a temp home folder.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { runConnect } from '../../src/cli/agentConnection';
import type { SettingsScope } from '../../src/cli/agents/agent';
import { cliEntryFile, useLauncher } from '../../src/cli/installation';
import { defaultLauncherFile, installLauncher } from '../../src/cli/launcherScript';
import { agentConnectionStates, connectionStateOf } from '../../src/vscode/connectionStates';
import { cleanupTempDirs, makeRepo, tempDir, write } from '../support/gitFixtures';

describe('connection states: doctor’s checks as VS Code shows them (real settings files, real git)', function () {
  this.timeout(60_000);
  const savedHome = process.env.HOME;
  let repo = '';
  let launcher = '';

  beforeEach(() => {
    process.env.HOME = tempDir('avh-home-');
    repo = makeRepo();
    launcher = defaultLauncherFile(process.env.HOME);
    installLauncher({ file: launcher, cli: cliEntryFile(), runtime: process.execPath });
  });
  afterEach(() => {
    process.env.HOME = savedHome;
    useLauncher(null);
    cleanupTempDirs();
  });

  const connect = (agent: string, scope: SettingsScope) =>
    runConnect({ action: 'connect', agent, scope, dryRun: false, folder: repo });
  const states = async () =>
    Object.fromEntries((await agentConnectionStates(repo)).map((s) => [s.agent.name, s.state]));

  it('not connected → connected (the launcher form); the direct form while the launcher is in use → older form', async () => {
    useLauncher(launcher);
    const others = { copilot: 'not-connected', gemini: 'not-connected', opencode: 'not-connected' };
    assert.deepEqual(await states(), { 'claude-code': 'not-connected', codex: 'not-connected', ...others });
    await connect('claude-code', 'local');
    useLauncher(null);
    await connect('codex', 'project'); // the direct form: this Node and this CLI by their paths
    useLauncher(launcher);
    assert.deepEqual(await states(), { 'claude-code': 'connected', codex: 'older-form', ...others });
    await connect('codex', 'project'); // connecting again updates the entries in place
    // Current now, and Codex has not reviewed the changed command (no trusted_hash in its config.toml): it would
    // skip it, so the state says so.
    assert.equal((await states()).codex, 'needs-review');
  });

  it('a malformed settings file, or the hook in two files → needs attention', async () => {
    useLauncher(launcher);
    write(repo, '.claude/settings.json', '{ "hooks": ');
    assert.equal((await states())['claude-code'], 'problem');
    fs.rmSync(path.join(repo, '.claude/settings.json'));
    await connect('claude-code', 'local');
    await connect('claude-code', 'user');
    assert.equal((await states())['claude-code'], 'problem');
  });

  it('what an agent decided about hooks it runs (Codex’s review, its project trust) → waiting for your review', () => {
    const connected = [{ scope: 'project', file: '/p/.codex/hooks.json', events: ['Stop'] }];
    const check = (status: 'ok' | 'warning' | 'problem', facts: Record<string, unknown>) => ({
      id: 'hooks:codex',
      status,
      summary: 's',
      facts: { connected, ...facts },
    });
    const review = (r: string) => [
      { event: 'UserPromptSubmit', review: 'trusted' },
      { event: 'Stop', review: r },
    ];
    assert.equal(connectionStateOf(check('problem', { hooks: review('not-reviewed') })), 'needs-review');
    assert.equal(connectionStateOf(check('problem', { hooks: review('modified') })), 'needs-review');
    assert.equal(connectionStateOf(check('problem', { projectTrusted: false })), 'needs-review');
    assert.equal(connectionStateOf(check('ok', { hooks: review('trusted'), projectTrusted: true })), 'connected');
    assert.equal(connectionStateOf(check('warning', { hooks: review('trusted') })), 'older-form');
  });
});
