import type { AgentGuard } from '../agents/agent';

// The agents' own answers that stop a tool before it runs (connect --guard-destructive, issue 34), each read from the
// pinned binary's own code (docs/design/command-checkpoints.md, "The guard").

/**
 * Claude Code's and Codex's PreToolUse: `hookSpecificOutput.permissionDecision: "deny"` with a reason (Codex refuses
 * "ask" and "allow", and a deny without a non-empty reason). The tool is not run; the model reads the reason.
 */
export const preToolUseDeny: AgentGuard = {
  help: 'PreToolUse permissionDecision "deny"',
  answer: (reason) =>
    JSON.stringify({
      hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: reason },
    }),
};

/** Gemini CLI's BeforeTool: `decision: "deny"` with a reason (its isBlockingDecision; "block" is the same). */
export const beforeToolDeny: AgentGuard = {
  help: 'BeforeTool decision "deny"',
  answer: (reason) => JSON.stringify({ decision: 'deny', reason }),
};

/** Copilot CLI's preToolUse: top-level `permissionDecision: "deny"` with `permissionDecisionReason`. */
export const copilotPreToolUseDeny: AgentGuard = {
  help: 'preToolUse permissionDecision "deny"',
  answer: (reason) => JSON.stringify({ permissionDecision: 'deny', permissionDecisionReason: reason }),
};
