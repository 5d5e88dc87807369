// The set-up end-to-end describes share: a repository made by the describe, one workbench on it for all its tests
// (startWorkbench: code-server + Chromium, extension from the .vsix), a screenshot of the window when a test fails,
// and everything stopped and deleted at the end.
import { cleanupTempDirs } from '../support/gitFixtures';
import { startWorkbench, type Workbench } from './harness';

export interface WorkbenchSuite {
  /** The repository `prepare` made (the workbench's folder). */
  readonly folder: string;
  readonly workbench: Workbench;
}

/**
 * Registers the calling describe's hooks: before its tests, `prepare` makes the repository (real git, through the
 * shipped CLI where it records turns) and returns its folder, and the workbench opens it; a failing test's screenshot
 * is `e2e-<name>-<test>.png` in test-artifacts/. The returned object answers once the describe's tests run.
 */
export function useWorkbench(
  name: string,
  prepare: () => string | Promise<string>,
  options: Omit<Parameters<typeof startWorkbench>[0], 'folder'> = {},
): WorkbenchSuite {
  let folder: string | undefined;
  let workbench: Workbench | undefined;
  before(async () => {
    folder = await prepare();
    workbench = await startWorkbench({ ...options, folder });
  });
  afterEach(async function () {
    const test = this.currentTest;
    if (test?.state === 'failed' && workbench)
      console.log(`    screenshot: ${await workbench.screenshot(`e2e-${name}-${test.fullTitle()}`)}`);
  });
  after(async () => {
    await workbench?.stop();
    cleanupTempDirs();
  });
  return {
    get folder() {
      if (folder === undefined) throw new Error(`${name}: the repository is made before the tests`);
      return folder;
    },
    get workbench() {
      if (!workbench) throw new Error(`${name}: the workbench starts before the tests`);
      return workbench;
    },
  };
}
