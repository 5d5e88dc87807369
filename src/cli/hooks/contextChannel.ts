/**
 * How a note reaches an agent's model (issue 23, docs/design/agent-notes.md): what the hook of the event that
 * begins a turn prints on stdout, which the agent adds to the model's context. Each agent declares its channel in
 * its definition (agents/<agent>.ts, `context`); verified against the real binaries (test/agents/).
 */

/** The stdout that carries `text` for the begin event `event` (its name as the agent sent it). */
export type ContextChannel = (text: string, event: string) => string;

/**
 * `{"hookSpecificOutput": {"hookEventName": <event>, "additionalContext": <text>}}`: Claude Code's UserPromptSubmit,
 * Codex's UserPromptSubmit (a developer message), Gemini CLI's BeforeAgent; VS Code reads it too.
 */
export const hookSpecificContext: ContextChannel = (text, event) =>
  JSON.stringify({ hookSpecificOutput: { hookEventName: event, additionalContext: text } });

/**
 * `{"additionalContext": <text>}` at the top level: GitHub Copilot CLI (which ignores the hookSpecificOutput form) and
 * VS Code; our opencode plugin reads it and adds the text to the prompt as a synthetic part.
 */
export const topLevelContext: ContextChannel = (text) => JSON.stringify({ additionalContext: text });
