import * as fs from 'node:fs';
import * as path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import type * as ClaudeAgentSdk from '@anthropic-ai/claude-agent-sdk';
import type { StoredTurnAnchor } from '../../core/chats/turnAnchors';
import { EXIT } from '../exitCodes';
import { type ConversationFork, type ConversationMechanism, refusal } from './mechanism';

/**
 * Claude Code (verified with 2.1.197): the Agent SDK's session functions (`@anthropic-ai/claude-agent-sdk` 0.3.197,
 * the release built with Claude Code 2.1.197). `forkSession(sessionId, { upToMessageId })` writes a new session
 * beside the original, up to and including that message, with fresh message ids; `getSessionMessages` reads a
 * session's conversation back; `deleteSession` removes what we made when the read-back does not match. The user then
 * runs `claude --resume <fork>` in the session's folder. The original session is never written.
 *
 * The anchor (docs/design/conversation-rollback.md): the turn's hook named its `prompt_id` and the session file; the
 * prompt's own entry in that file (`promptId`) names the entry before it (`parentUuid`): the conversation just before
 * the turn. Read here, when a fork is asked for, never on the hook path (and by then the file is long flushed, unlike
 * at `Stop`). Only the entries' ids and types are read.
 */

/** The SDK, loaded only when a fork is asked for (it is large, and nothing else needs it). */
function sdk(): typeof ClaudeAgentSdk {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require('@anthropic-ai/claude-agent-sdk') as typeof ClaudeAgentSdk;
}

interface PromptEntry {
  uuid: string;
  parentUuid: string | null;
  cwd: string;
}

/** The prompt's entry in the session file: the first non-sidechain user entry carrying this promptId. */
function promptEntry(transcript: string, promptId: string): PromptEntry | null {
  const text = fs.readFileSync(transcript, 'utf8');
  for (const line of text.split('\n')) {
    if (!line.includes(promptId)) continue;
    let e: Record<string, unknown>;
    try {
      e = JSON.parse(line) as Record<string, unknown>;
    } catch {
      continue;
    }
    if (e.type !== 'user' || e.promptId !== promptId || e.isSidechain === true || typeof e.uuid !== 'string') continue;
    const parent = typeof e.parentUuid === 'string' ? e.parentUuid : null;
    if (typeof e.cwd !== 'string') return null;
    return { uuid: e.uuid, parentUuid: parent, cwd: e.cwd };
  }
  return null;
}

/**
 * The SDK finds sessions under `$CLAUDE_CONFIG_DIR/projects` (else ~/.claude): the folder the agent wrote the session
 * file in, `<config>/projects/<project>/<session>.jsonl`, is the one it must search.
 */
async function withConfigDir<T>(transcript: string, fn: () => Promise<T>): Promise<T> {
  const config = path.dirname(path.dirname(path.dirname(transcript)));
  const before = process.env.CLAUDE_CONFIG_DIR;
  process.env.CLAUDE_CONFIG_DIR = config;
  try {
    return await fn();
  } finally {
    if (before === undefined) delete process.env.CLAUDE_CONFIG_DIR;
    else process.env.CLAUDE_CONFIG_DIR = before;
  }
}

async function fork(anchor: StoredTurnAnchor): Promise<ConversationFork> {
  const transcript = anchor.transcript;
  if (!transcript)
    throw refusal('Where this turn sits in its Claude Code conversation is unknown (its hook named no session file).');
  if (
    path.basename(transcript) !== `${anchor.chatRef}.jsonl` ||
    path.basename(path.dirname(path.dirname(transcript))) !== 'projects'
  )
    throw refusal('The session file this turn’s hook named is not where Claude Code keeps its sessions.');
  if (!fs.existsSync(transcript))
    throw refusal(
      `The Claude Code session of this turn is gone: its file ${transcript} no longer exists (deleted, or cleaned ` +
        'up by Claude Code).',
    );
  const prompt = promptEntry(transcript, anchor.turnRef);
  if (!prompt)
    throw refusal(
      'The Claude Code session file has no entry for this turn’s prompt, so where the conversation stood before it ' +
        'is unknown.',
    );
  if (prompt.parentUuid === null)
    throw refusal(
      'This turn began its Claude Code conversation: there is no conversation before it to continue. Start a new ' +
        'chat instead.',
      EXIT.usage,
    );
  const upTo = prompt.parentUuid;
  const { forkSession, getSessionMessages, deleteSession } = sdk();
  const dir = prompt.cwd;
  return withConfigDir(transcript, async () => {
    let forkId: string;
    try {
      ({ sessionId: forkId } = await forkSession(anchor.chatRef, { dir, upToMessageId: upTo }));
    } catch {
      // The SDK's message names the session or the message it did not find: ids only, but ours is plainer.
      throw refusal('Claude Code could not fork this session at the turn’s anchor (the session or its entry is gone).');
    }
    // Read back through the same SDK: the fork holds exactly the original's messages before this turn's prompt.
    let same = false;
    try {
      const original = await getSessionMessages(anchor.chatRef, { dir });
      const forked = await getSessionMessages(forkId, { dir });
      const before = original.findIndex((m) => m.uuid === prompt.uuid);
      same =
        before > 0 &&
        forked.length === before &&
        forked.every((m, i) => m.type === original[i].type && isDeepStrictEqual(m.message, original[i].message));
    } catch {
      same = false;
    }
    if (!same) {
      await deleteSession(forkId, { dir });
      throw refusal(
        'Claude Code’s fork did not end just before this turn when read back (the session’s format may have ' +
          'changed), so it was deleted again.',
      );
    }
    return { forkId, anchorId: upTo, resume: { argv: ['claude', '--resume', forkId], cwd: dir } };
  });
}

export const claudeCodeConversation: ConversationMechanism = {
  agent: 'claude-code',
  displayName: 'Claude Code',
  command: 'claude',
  verifiedVersion: '2.1.197',
  versionOf: (line) => /^(\d+\.\d+\.\d+) \(Claude Code\)$/.exec(line)?.[1] ?? null,
  // The session format of the 2.x line; the fork is read back and deleted again if it does not match.
  supports: (version) => version.startsWith('2.'),
  fork: (anchor) => fork(anchor),
};
