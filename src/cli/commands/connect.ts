import { connectRequest, runConnect } from '../agentConnection';
import { CONNECTABLE_AGENTS, scopeOptionHelp } from '../agents/registry';
import type { CommandContext, CommandOutput, CommandSpec } from '../command';
import { SCOPE_OPTIONS } from '../commandOptions';

export const spec: CommandSpec = {
  name: 'connect',
  args: [{ name: 'agent', choices: CONNECTABLE_AGENTS.map((a) => a.name), what: 'agent' }],
  options: [...SCOPE_OPTIONS, 'dry-run', 'init', 'guard-destructive'],
  exclusive: [SCOPE_OPTIONS],
  optionHelp: scopeOptionHelp(),
  summary: 'add this CLI’s hooks to the agent’s settings file (idempotent)',
  description:
    'Adds one hook entry per event to the agent’s settings file (opencode: a plugin file of its own), calling this ' +
    'installation by its absolute path. Other settings and other tools’ hooks are kept as they are; running it ' +
    'again changes nothing. The file is written atomically. It then says what you must still do in the agent ' +
    '(Codex: review the hooks; Copilot CLI and Gemini CLI: trust the folder). With --init, the hook creates the ' +
    'git repository on the first prompt in a folder without one (`hook … --init`); connecting again without it ' +
    'writes the plain command. Tool events get the command with --tool (nothing runs git before such an event is ' +
    'read). With --guard-destructive, the agent is told not to run a destructive shell command and to ask you ' +
    'first, in its own deny form where it has one (Claude Code, Codex, Gemini CLI, opencode); the checkpoint is ' +
    'taken all the same.',
  example: 'agent-versions connect claude-code --user --dry-run',
  json:
    '{"agent": string, "scope": "project"|"local"|"user", "file": string, "command": string, ' +
    '"toolCommand": string, "beforeToolCommand": string, "guardDestructive": boolean, "dryRun": boolean, ' +
    '"changed": boolean, "removedFile": boolean, ' +
    '"changes": [{"event": string, "action": "added"|"updated"|"removed"}], ' +
    '"alsoConnectedIn": string[], "inAgent": string[] (what you must still do in the agent)}',
};

export function run(c: CommandContext): Promise<CommandOutput> {
  return runConnect(connectRequest('connect', c));
}
