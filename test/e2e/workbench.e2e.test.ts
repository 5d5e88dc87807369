// Proves the end-to-end harness: the packaged extension installs into code-server, the workbench opens
// the repository, and the Extensions view lists the extension as installed.
import { createGitWorkspace, type TestWorkspace } from '../integration/workspace';
import { runCommand, startWorkbench, type Workbench } from './harness';

describe('workbench (code-server + Chromium, extension from the .vsix)', function () {
  this.timeout(120_000);
  let workspace: TestWorkspace | undefined;
  let workbench: Workbench | undefined;

  before(async () => {
    workspace = createGitWorkspace();
    workbench = await startWorkbench({ folder: workspace.folder });
  });

  afterEach(async function () {
    const test = this.currentTest;
    if (test?.state === 'failed' && workbench)
      console.log(`    screenshot: ${await workbench.screenshot(`e2e-${test.fullTitle()}`)}`);
  });

  after(async () => {
    await workbench?.stop();
    workspace?.dispose();
  });

  it('opens the repository folder', async () => {
    const { page } = workbench!;
    await page
      .locator('.explorer-folders-view .monaco-list-row', { hasText: 'README.md' })
      .waitFor({ timeout: 30_000 });
  });

  it('lists Agent Version History among the installed extensions', async () => {
    const { page } = workbench!;
    await runCommand(page, 'Extensions: Show Installed Extensions');
    await page
      .locator('.extensions-viewlet .extension-list-item', { hasText: 'Agent Version History' })
      .first()
      .waitFor({ state: 'visible', timeout: 30_000 });
  });
});
