import type { Agent } from '../agents/agent';
import { installedAgent } from '../conversations/mechanism';
import { conversationMechanismOf } from '../conversations/registry';
import { type Check, ok, warning } from './check';

/**
 * Whether `chat fork` can continue this agent's conversation from before a turn (issue 32) with the version on PATH:
 * the agent's mechanism (conversations/registry.ts), the version it was verified with and the one installed, and
 * what the mechanism needs besides the agent (Claude Code: the Agent SDK, which we may not ship).
 */
export function checkConversationRollback(agent: Agent, env: NodeJS.ProcessEnv): Check {
  const id = `chat:${agent.name}`;
  const name = agent.settings?.displayName ?? agent.name;
  const mechanism = conversationMechanismOf(agent.name);
  if (!mechanism)
    return ok(id, `${name}: continuing the chat from before a turn is not available; the agent is told of an Undo.`, {
      available: false,
    });
  const facts = { verifiedVersion: mechanism.verifiedVersion };
  const installed = installedAgent(mechanism, env);
  if (!installed.file)
    return ok(id, `${name}: \`${mechanism.command}\` is not on PATH; chat fork needs it.`, {
      ...facts,
      available: false,
    });
  if (installed.version === null || !mechanism.supports(installed.version))
    return warning(
      id,
      `${name} ${installed.version ?? '(version unknown)'}: chat fork is not available for this version.`,
      `Use ${name} ${mechanism.verifiedVersion} (verified) to continue a chat from before a turn.`,
      { ...facts, available: false, version: installed.version },
    );
  const prerequisite = mechanism.prerequisite?.(installed.file, env);
  if (prerequisite && !prerequisite.met)
    return warning(id, `${name} ${installed.version}: ${prerequisite.message}`, prerequisite.fix, {
      ...facts,
      available: false,
      version: installed.version,
      ...prerequisite.facts,
    });
  const verified =
    installed.version === mechanism.verifiedVersion ? 'verified' : `verified with ${facts.verifiedVersion}`;
  const uses = prerequisite ? `; ${prerequisite.summary}` : '';
  return ok(
    id,
    `${name} ${installed.version}: chat fork can continue a chat from before a turn (${verified}${uses}).`,
    { ...facts, available: true, version: installed.version, ...prerequisite?.facts },
  );
}
