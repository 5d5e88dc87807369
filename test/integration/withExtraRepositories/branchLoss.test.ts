import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import type { ChatContinuedEvent } from '../../../src/vscode/branchLoss';
import { CONTINUE_ON_NEW_BRANCH_COMMAND } from '../../../src/vscode/branchLoss';
import type { AgentVersionHistoryApi } from '../../../src/vscode/extensionApi';
import { localBranchNames, loseChatBranch, repoWithChatBranch } from '../../support/chatBranchFixtures';
import { cleanupTempDirs, git } from '../../support/gitFixtures';

// In withExtraRepositories/: the files run in sorted order, so tests that open repositories besides the workspace's
// run after those that count the window's repositories (index.ts).
const EXTENSION_ID = 'agent-version-history.agent-version-history';

describe('branch loss through the extension API in real VS Code (a repository outside the workspace)', function () {
  this.timeout(60_000);
  // The extension keeps this repository open for the rest of the run (other tests walk every open repository):
  // it is removed when the extension host exits, not before.
  before(() => process.once('exit', cleanupTempDirs));

  it('resuming a lost chat is refused untouched; Continue on a New Branch fires onDidContinueChatOnNewBranch once', async () => {
    const { repo, history } = await repoWithChatBranch();
    await history.close();
    loseChatBranch(repo);
    const avh = await vscode.extensions.getExtension<AgentVersionHistoryApi>(EXTENSION_ID)!.activate();
    const events: ChatContinuedEvent[] = [];
    const sub = avh.onDidContinueChatOnNewBranch((e) => events.push(e));
    try {
      const head = git(repo, 'rev-parse', 'HEAD').trim();
      await assert.rejects(
        avh.beginTurn({ chatId: 'chat-1', prompt: 'go on', repository: repo }),
        (error: Error & { reason?: string }) => {
          assert.equal(error.reason, 'branch-lost');
          assert.match(
            error.message,
            /The branch "feature\/login" for this chat no longer exists locally or on "origin"\. Its code changes cannot be recovered\./,
          );
          return true;
        },
      );
      assert.equal(git(repo, 'rev-parse', 'HEAD').trim(), head);
      assert.deepEqual(localBranchNames(repo), ['main']);

      const continued = await vscode.commands.executeCommand<ChatContinuedEvent | undefined>(
        CONTINUE_ON_NEW_BRANCH_COMMAND,
        { chatId: 'chat-1', repository: repo },
      );
      assert.equal(continued?.newBranch, 'feature/login-2');
      assert.equal(events.length, 1);
      assert.deepEqual(
        { ...events[0], at: 0 },
        {
          chatId: 'chat-1',
          oldBranch: 'feature/login',
          newBranch: 'feature/login-2',
          baseBranch: 'main',
          repository: repo,
          at: 0,
        },
      );
      // A second click changes nothing and fires nothing.
      await vscode.commands.executeCommand(CONTINUE_ON_NEW_BRANCH_COMMAND, { chatId: 'chat-1', repository: repo });
      assert.equal(events.length, 1);
      // The agent resumes on the new branch.
      const { turnId } = await avh.beginTurn({ chatId: 'chat-1', prompt: 'go on', repository: repo });
      await avh.endTurn(turnId, 'cancelled');
      assert.equal(git(repo, 'symbolic-ref', '--short', 'HEAD').trim(), 'feature/login-2');
    } finally {
      sub.dispose();
    }
  });
});
