/**
 * Copy of the Enable Version History notification (issue 13), shared by the extension and its end-to-end test
 * (no 'vscode' import: the test runs under plain Node).
 */
export const ENABLE_QUESTION = 'Agent Version History keeps versions in git. Enable Version History for this folder?';
export const ENABLE_BUTTON = 'Enable Version History';
export const NOT_NOW_BUTTON = 'Not Now';

/** Test build only: the command that plays an agent extension's turn through the API, and how it reports. */
export const TEST_AGENT_TURN_COMMAND = 'agentVersions._test.agentTurn';
export const TEST_AGENT_RESULT = 'Test agent turn:';
