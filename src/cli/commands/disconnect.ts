import { connectRequest, runConnect } from '../agentConnection';
import { CONNECTABLE_AGENTS, scopeOptionHelp } from '../agents/registry';
import type { CommandContext, CommandOutput, CommandSpec } from '../command';
import { SCOPE_OPTIONS } from '../commandOptions';

export const spec: CommandSpec = {
  name: 'disconnect',
  args: [{ name: 'agent', choices: CONNECTABLE_AGENTS.map((a) => a.name), what: 'agent' }],
  options: [...SCOPE_OPTIONS, 'dry-run'],
  exclusive: [SCOPE_OPTIONS],
  optionHelp: scopeOptionHelp(),
  summary: 'remove exactly this CLI’s hooks from the agent’s settings file',
  description:
    'Removes the hook entries that run agent-versions (from any installation) and nothing else; containers left ' +
    'empty by that removal go too, and a file of our own (GitHub Copilot’s agent-versions.json, opencode’s ' +
    'plugin) is deleted.',
  example: 'agent-versions disconnect claude-code',
  json: 'the same shape as connect',
};

export function run(c: CommandContext): Promise<CommandOutput> {
  return runConnect(connectRequest('disconnect', c));
}
