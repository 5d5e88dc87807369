/**
 * The CLI entry's shortcut for pre-tool events (issue 34; src/cli/hooks/toolShortcut.ts): it answers an event only
 * when the agent's own reading could not find a destructive command in it, and its lists are the registry's.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { AGENTS } from '../../src/cli/agents/registry';
import { destructiveCommandOf } from '../../src/cli/hooks/checkpointHook';
import { parseHookInput } from '../../src/cli/hooks/hookInput';
import { harmlessPreTool, HOOK_AGENTS, PRE_TOOL_EVENTS } from '../../src/cli/hooks/toolShortcut';

const FIXTURES = path.resolve(__dirname, '../../../test/fixtures/hooks');

/** Each agent's own pre-tool payload (captured from the binaries; opencode's is our plugin's) and where its command is. */
const PRE_TOOL: readonly [agent: string, fixture: string, withCommand: (c: string | string[]) => object][] = [
  ['claude-code', 'claude-code/PreToolUse.json', (c) => ({ tool_name: 'Bash', tool_input: { command: c } })],
  ['codex', 'claude-code/PreToolUse.json', (c) => ({ tool_name: 'Bash', tool_input: { command: c } })],
  ['copilot', 'copilot-cli/PreToolUse-Bash.json', (c) => ({ tool_input: { command: c } })],
  [
    'copilot',
    'copilot-cli/PreToolUse-Bash.json',
    (c) => ({ tool_name: 'run_in_terminal', tool_input: { command: c } }),
  ],
  ['gemini', 'gemini/BeforeTool-run_shell_command.json', (c) => ({ tool_input: { command: c } })],
  ['opencode', 'opencode/tool.execute.before-bash.json', (c) => ({ command: c })],
];

function payload(fixture: string, overrides: object): string {
  const captured = JSON.parse(fs.readFileSync(path.join(FIXTURES, fixture), 'utf8')) as object;
  return JSON.stringify({ ...captured, ...overrides });
}

describe('the entry’s pre-tool shortcut (toolShortcut.ts)', () => {
  it('its lists are the registry’s: every agent `hook` takes, every pre-tool event of their tables', () => {
    assert.deepEqual([...HOOK_AGENTS].sort(), AGENTS.map((a) => a.name).sort());
    const before = AGENTS.flatMap((a) => [...a.events].filter(([, e]) => e === 'before-tool').map(([e]) => e));
    assert.deepEqual([...PRE_TOOL_EVENTS].sort(), [...new Set(before)].sort());
  });

  it('never answers an event whose command the agent’s own reading finds destructive; answers harmless ones', async () => {
    const argv = ['hook', '', '--tool'];
    for (const [agent, fixture, withCommand] of PRE_TOOL) {
      argv[1] = agent;
      for (const command of ['git reset --hard', 'rm -rf src', ['bash', '-lc', 'git clean -fdx'], 'cd a && mv x y']) {
        const raw = payload(fixture, withCommand(command));
        const event = await parseHookInput({ agent, readStdin: async () => raw, env: {} });
        assert.ok(destructiveCommandOf(event), `${agent} ${fixture}: the agent reads ${JSON.stringify(command)}`);
        assert.equal(harmlessPreTool(argv, raw), false, `${agent} ${fixture} ${JSON.stringify(command)}`);
        assert.equal(harmlessPreTool([...argv, '--guard-destructive'], raw), false);
      }
      for (const command of ['npm test -- --watch=false', 'ls -la', ['python3', '-m', 'pytest']]) {
        const raw = payload(fixture, withCommand(command));
        assert.equal(harmlessPreTool(argv, raw), true, `${agent} ${fixture} ${JSON.stringify(command)}`);
        assert.equal(harmlessPreTool([...argv, '--guard-destructive'], raw), true);
      }
    }
  });

  it('leaves everything else to the fast path: no --tool, --json, another option, an unknown agent or event, bad input', () => {
    const raw = payload('claude-code/PreToolUse.json', { tool_name: 'Bash', tool_input: { command: 'ls' } });
    assert.equal(harmlessPreTool(['hook', 'claude-code', '--tool'], raw), true);
    for (const argv of [
      ['hook', 'claude-code'],
      ['hook', 'claude-code', '--tool', '--json'],
      ['hook', 'claude-code', '--tool', '--verbose'],
      ['hook', 'claude-code', '--tool', '--repo', '/x'],
      ['hook', 'no-such-agent', '--tool'],
      ['hook', 'toString', '--tool'],
      ['status', 'claude-code', '--tool'],
    ])
      assert.equal(harmlessPreTool(argv, raw), false, argv.join(' '));
    const tool = ['hook', 'claude-code', '--tool'];
    for (const bad of [
      '',
      '{"hook_event_name":',
      '[]',
      'null',
      JSON.stringify({ hook_event_name: 'PostToolUse', session_id: 's', tool_input: { command: 'ls' } }),
      JSON.stringify({ hook_event_name: 'UserPromptSubmit', session_id: 's', prompt: 'ls' }),
      JSON.stringify({ hook_event_name: 'PreToolUse', tool_input: { command: 'ls' } }),
      JSON.stringify({ hook_event_name: 'PreToolUse', session_id: '', tool_input: { command: 'ls' } }),
      JSON.stringify({ hook_event_name: 'PreToolUse', session_id: 's', tool_input: { command: 42 } }),
      JSON.stringify({ hook_event_name: 'PreToolUse', session_id: 's', tool_input: { command: ['ls', 1] } }),
      JSON.stringify({ hook_event_name: 'PreToolUse', session_id: 's', command: { x: 1 } }),
    ])
      assert.equal(harmlessPreTool(tool, bad), false, bad);
  });
});
