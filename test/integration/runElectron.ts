// `npm run test:electron`: the same extension-host suite in a downloaded VS Code (Electron) through
// @vscode/test-electron, for machines with internet. Offline machines use scripts/vscode/runExtensionTests.mjs.
import * as path from 'node:path';
import { runTests } from '@vscode/test-electron';
import { createGitWorkspace } from './workspace';

async function main(): Promise<void> {
  const root = path.resolve(__dirname, '../../..');
  const workspace = createGitWorkspace();
  try {
    const code = await runTests({
      // The test build (scripts/build.mjs): the only one that registers the `agentVersions._test.*` commands.
      extensionDevelopmentPath: path.join(root, 'dist/test-extension'),
      extensionTestsPath: path.join(__dirname, 'index.js'),
      launchArgs: [
        workspace.folder,
        '--disable-workspace-trust',
        '--disable-extensions',
        '--skip-welcome',
        '--skip-release-notes',
      ],
    });
    process.exitCode = code;
  } finally {
    workspace.dispose();
  }
}

main().catch((err: unknown) => {
  console.error('extension-host tests failed:', err instanceof Error ? err.message : err);
  process.exitCode = 1;
});
