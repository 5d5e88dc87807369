import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { safeMessage } from '../core/errors';
import { initRepository } from '../core/git/initRepository';
import type { EventLog } from '../core/log';
import { ENABLE_BUTTON, ENABLE_QUESTION, NOT_NOW_BUTTON, TEST_AGENT_RESULT } from './enableCopy';
import type { AgentVersionHistoryApi } from './extensionApi';

/**
 * Issue 13: a folder without git. When an agent calls the API or the user runs an Agent Versions command there,
 * one notification offers to Enable Version History (`git init` with the user's default branch name, then the
 * action proceeds). Not Now (or dismissing it) is remembered per folder in globalState: asked again at most once a day.
 */

const DECLINED_KEY = 'agentVersions.enableDeclinedAt';
const ASK_AGAIN_AFTER_MS = 24 * 60 * 60 * 1000;

export class EnableVersionHistory {
  /** One question per folder at a time: concurrent callers share its answer. */
  private readonly asking = new Map<string, Promise<boolean>>();

  constructor(
    private readonly state: vscode.Memento,
    private readonly log: EventLog,
  ) {}

  /**
   * Asks (unless declined in the last day) and, on Enable, creates the repository. Resolves whether there now is
   * one.
   */
  ask(folder: string): Promise<boolean> {
    let pending = this.asking.get(folder);
    if (!pending) {
      pending = this.askNow(folder).finally(() => this.asking.delete(folder));
      this.asking.set(folder, pending);
    }
    return pending;
  }

  private async askNow(folder: string): Promise<boolean> {
    const declined = this.state.get<Record<string, number>>(DECLINED_KEY, {});
    if (Date.now() - (declined[folder] ?? 0) < ASK_AGAIN_AFTER_MS) return false;
    const choice = await vscode.window.showInformationMessage(ENABLE_QUESTION, ENABLE_BUTTON, NOT_NOW_BUTTON);
    if (choice !== ENABLE_BUTTON) {
      await this.state.update(DECLINED_KEY, { ...declined, [folder]: Date.now() });
      this.log.info('enable.declined', { dismissed: choice === undefined });
      return false;
    }
    try {
      const result = await initRepository(folder);
      this.log.info('enable.initialised', { created: result.created });
      return true;
    } catch (error) {
      this.log.warn('enable.failed', {});
      void vscode.window.showErrorMessage(
        `Agent Version History could not enable Version History: ${safeMessage(error)}`,
      );
      return false;
    }
  }
}

/**
 * Test build only (TEST_AGENT_TURN_COMMAND): what an agent extension does for one turn through the API (begin,
 * write a file in `repository`, end completed), its result shown as a notification the end-to-end test waits for.
 */
export async function runTestAgentTurn(api: AgentVersionHistoryApi, args: unknown): Promise<string> {
  const {
    prompt = 'Scaffold an app',
    file = 'app.js',
    repository,
  } = (args ?? {}) as { prompt?: string; file?: string; repository?: string };
  let result: string;
  try {
    const { turnId } = await api.beginTurn({ chatId: 'test-agent', prompt, ...(repository ? { repository } : {}) });
    const folder = repository ?? vscode.workspace.workspaceFolders![0].uri.fsPath;
    fs.writeFileSync(path.join(folder, file), `// ${prompt}\n`);
    const { version } = await api.endTurn(turnId, 'completed');
    result = version ? `version ${version}` : 'no version';
  } catch (error) {
    result = `failed: ${safeMessage(error)}`;
  }
  void vscode.window.showInformationMessage(`${TEST_AGENT_RESULT} ${result}`);
  return result;
}
