import * as assert from 'node:assert/strict';
import { VersionHistory, OpenOptions } from '../../src/core/versionHistory';
import { git, makeRepo, tempDir, write } from './gitFixtures';
import { contextOf } from '../../src/core/repoContextOf';

/**
 * A repository with a real bare remote on disk (file://): main pushed (the remote's default branch), and chat
 * `chat-1` whose one completed turn was recorded on its own branch `feature/login`, pushed too. The working tree
 * is back on main; the chat has the opaque resume identity `resume-abc`.
 */
export async function repoWithChatBranch(
  options: OpenOptions = {},
): Promise<{ repo: string; remote: string; history: VersionHistory; turnId: string }> {
  const repo = makeRepo();
  const remote = tempDir('avh-remote-');
  git(remote, 'init', '-q', '--bare', '-b', 'main');
  git(repo, 'remote', 'add', 'origin', `file://${remote}`);
  git(repo, 'push', '-q', '-u', 'origin', 'main');
  git(repo, 'remote', 'set-head', 'origin', 'main');
  git(repo, 'switch', '-q', '-c', 'feature/login');
  const history = await VersionHistory.open(repo, options);
  const { turnId } = await history.beginTurn({ chatId: 'chat-1', prompt: 'Add the login form', chatTitle: 'Login' });
  write(repo, 'login.ts', 'export const login = true;\n');
  const { version } = await history.endTurn(turnId, 'completed');
  assert.ok(version);
  git(repo, 'push', '-q', 'origin', 'feature/login');
  git(repo, 'switch', '-q', 'main');
  await contextOf(history).store.transaction((tx) =>
    tx.run("UPDATE chats SET resume_identity = 'resume-abc' WHERE id = 'chat-1'"),
  );
  return { repo, remote, history, turnId };
}

/** Deletes the chat's branch locally and on the remote: a confirmed loss. */
export function loseChatBranch(repo: string): void {
  git(repo, 'push', '-q', 'origin', '--delete', 'feature/login');
  git(repo, 'branch', '-q', '-D', 'feature/login');
}

export function localBranchNames(repo: string): string[] {
  return git(repo, 'for-each-ref', '--format=%(refname:short)', 'refs/heads/').split('\n').filter(Boolean).sort();
}
