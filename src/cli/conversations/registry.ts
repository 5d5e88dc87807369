import { claudeCodeConversation } from './claudeCode';
import { codexConversation } from './codex';
import type { ConversationMechanism } from './mechanism';
import { opencodeConversation } from './opencode';

/**
 * The agents whose conversation can be continued from before a turn (issue 32). Any other agent's turns get the
 * refusal NO_MECHANISM (and the note to the agent after an Undo, docs/design/agent-notes.md, stays its way to hear of
 * the Undo). Gemini CLI and GitHub Copilot CLI: docs/design/conversation-rollback.md says why not.
 */
export const CONVERSATION_MECHANISMS: readonly ConversationMechanism[] = [
  claudeCodeConversation,
  codexConversation,
  opencodeConversation,
];

export function conversationMechanismOf(agent: string | null): ConversationMechanism | null {
  return CONVERSATION_MECHANISMS.find((m) => m.agent === agent) ?? null;
}

export const NO_MECHANISM =
  'This agent cannot continue from an earlier turn; it will be told about the Undo instead (at its next prompt).';
