import * as fs from 'node:fs';
import * as path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import type { StoredTurnAnchor } from '../../core/chats/turnAnchors';
import { EXIT } from '../exitCodes';
import { CLAUDE_AGENT_SDK_VERIFIED, loadClaudeSdk, locateClaudeSdk } from './claudeSdk';
import { type ConversationFork, type ConversationMechanism, onPath, type Prerequisite, refusal } from './mechanism';

/**
 * Claude Code (verified with 2.1.197): the Agent SDK's session functions (`@anthropic-ai/claude-agent-sdk` 0.3.197,
 * the release built with Claude Code 2.1.197), from the user's own installation (claudeSdk.ts: not bundled, its
 * license does not allow redistribution). `forkSession(sessionId, { upToMessageId })` writes a new session
 * beside the original, up to and including that message, with fresh message ids; `getSessionMessages` reads a
 * session's conversation back; `deleteSession` removes what we made when the read-back does not match. The user then
 * runs `claude --resume <fork>` in the session's folder. The original session is never written.
 *
 * The anchor (docs/design/conversation-rollback.md): the turn's hook named its `prompt_id` and the session file; the
 * prompt's own entry in that file (`promptId`) names the entry before it (`parentUuid`): the conversation just before
 * the turn. Read here, when a fork is asked for, never on the hook path (and by then the file is long flushed, unlike
 * at `Stop`). Only the entries' ids and types are read.
 */

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

async function fork(anchor: StoredTurnAnchor, env: NodeJS.ProcessEnv): Promise<ConversationFork> {
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
  const claude = onPath('claude', env);
  if (!claude) throw refusal('Claude Code’s command `claude` is not on PATH, so a fork could not be resumed.');
  const { forkSession, getSessionMessages, deleteSession } = await loadClaudeSdk(claude, env);
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

/** The Agent SDK beside the `claude` on PATH (or in `npm root -g`), in the verified line. */
function sdkPrerequisite(claude: string, env: NodeJS.ProcessEnv): Prerequisite {
  const sdk = locateClaudeSdk(claude, env);
  const facts = { sdkVerifiedVersion: CLAUDE_AGENT_SDK_VERIFIED, sdkVersion: sdk.version, sdkDir: sdk.dir };
  return sdk.found
    ? { met: true, summary: `Claude Agent SDK ${sdk.version} at ${sdk.dir}`, facts }
    : { met: false, message: sdk.message, fix: sdk.fix, facts };
}

export const claudeCodeConversation: ConversationMechanism = {
  agent: 'claude-code',
  displayName: 'Claude Code',
  command: 'claude',
  verifiedVersion: '2.1.197',
  versionOf: (line) => /^(\d+\.\d+\.\d+) \(Claude Code\)$/.exec(line)?.[1] ?? null,
  // The session format of the 2.x line; the fork is read back and deleted again if it does not match.
  supports: (version) => version.startsWith('2.'),
  prerequisite: (claude, env) => sdkPrerequisite(claude, env),
  fork: (anchor, env) => fork(anchor, env),
};
