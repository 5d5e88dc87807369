// Checkpoints before an agent's destructive commands in a real workbench (code-server + Chromium, extension from the
// packaged .vsix, fresh profile, 1400×900), issue 34: a Claude Code turn driven through the shipped CLI's hook
// (`hook claude-code`, the payloads captured from the real binary) edits files, then runs `git clean -fdx` — its
// PreToolUse takes the checkpoint, the command really runs and deletes the agent's new file and the ignored `.env`.
// The running turn shows the step under it live; when the turn ends the end-of-turn notice names the command and
// the files it deleted; the step's Restore to Before This Command (clicked in the view) brings the tree back to just
// before the command, `.env` included, as a [Restore] version. Checked with git; nothing lost.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  assertNothingLost,
  cleanupTempDirs,
  contentInventory,
  git,
  makeRepo,
  read,
  write,
} from '../support/gitFixtures';
import { dist } from '../support/turnFixtures';
import {
  moveMouseAway,
  openVersionHistory,
  startWorkbench,
  versionHistoryPane,
  versionHistoryScreenshot,
  waitForNotification,
  type Workbench,
} from './harness';

const FIXTURES = path.resolve(__dirname, '../../../test/fixtures/hooks/claude-code');
const CAPTURED_REPO = '/home/user/work/repo';
const SESSION = '5b7e0c2d-1f3a-4b6c-8d9e-0a1b2c3d4e5f';

/** Claude Code's hook event `name` (captured payload) for this repository and session, through dist/cli.js. */
function hook(repo: string, name: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const text = fs.readFileSync(path.join(FIXTURES, name), 'utf8').split(CAPTURED_REPO).join(repo);
  const payload = { ...(JSON.parse(text) as object), cwd: repo, session_id: SESSION, ...overrides };
  const r = dist(repo, ['hook', 'claude-code', '--json'], JSON.stringify(payload));
  assert.equal(r.code, 0, `hook ${name}: ${r.stderr}`);
  return JSON.parse(r.stdout) as Record<string, unknown>;
}

describe('checkpoint steps and Restore to Before This Command (code-server + Chromium, extension from the .vsix)', function () {
  this.timeout(240_000);
  let folder = '';
  let workbench: Workbench | undefined;

  before(async () => {
    folder = makeRepo();
    write(folder, '.gitignore', '.env\n');
    write(folder, 'src/app.ts', 'export const app = 1;\n');
    git(folder, 'add', '-A');
    git(folder, 'commit', '-q', '-m', 'the app');
    write(folder, '.env', 'API_KEY=local-only\n');
    workbench = await startWorkbench({ folder });
  });

  afterEach(async function () {
    const test = this.currentTest;
    if (test?.state === 'failed' && workbench)
      console.log(`    screenshot: ${await workbench.screenshot(`e2e-checkpoints-${test.fullTitle()}`)}`);
  });

  after(async () => {
    await workbench?.stop();
    cleanupTempDirs();
  });

  it('the running turn shows the step; its end names the command; the step’s button brings the files back', async () => {
    const wb = workbench!;
    const page = wb.page;
    const view = versionHistoryPane(page);
    await openVersionHistory(page);
    await view.getByRole('option', { name: /^Commit: the app/ }).waitFor({ timeout: 60_000 });
    const before = contentInventory(folder);

    assert.equal(hook(folder, 'UserPromptSubmit.json', { prompt: 'Clean the build output' }).action, 'began');
    write(folder, 'src/app.ts', 'export const app = 2;\n');
    write(folder, 'src/feature.ts', 'export const feature = true;\n');
    const taken = hook(folder, 'PreToolUse.json', { tool_name: 'Bash', tool_input: { command: 'git clean -fdx' } });
    assert.equal(taken.action, 'checkpoint', JSON.stringify(taken));
    const beforeCommand = { app: read(folder, 'src/app.ts'), feature: read(folder, 'src/feature.ts') };
    for (const oid of contentInventory(folder)) before.add(oid);
    git(folder, 'clean', '-q', '-fdx'); // the agent's command, as its shell runs it
    assert.equal(fs.existsSync(path.join(folder, '.env')), false);
    assert.equal(fs.existsSync(path.join(folder, 'src/feature.ts')), false);

    // Under the running turn, live: what ran, the command as written, what is gone since.
    const step = view.getByRole('listitem', { name: /^Before git clean -x, 2 deleted since, 1 ignored file saved/ });
    await step.waitFor({ timeout: 30_000 });
    assert.equal(await step.locator('.command').textContent(), '$ git clean -fdx');
    assert.equal(await step.locator('.files').textContent(), 'Deleted: .env, src/feature.ts');
    await moveMouseAway(page);
    await wb.screenshot('checkpoint-steps-running');
    await versionHistoryScreenshot(page, 'readme-checkpoint-steps');

    // The agent goes on and the turn ends: a version; the end-of-turn notice names the command, once.
    write(folder, 'src/other.ts', 'export const other = 3;\n');
    assert.equal(hook(folder, 'Stop.json').action, 'ended');
    await waitForNotification(
      page,
      'The agent ran `git clean -x`; 2 files it deleted were saved — Restore to Before This Command.',
    );
    const version = git(folder, 'rev-parse', 'HEAD').trim();
    const ended = view.getByRole('listitem', {
      name: /^Before git clean -x, 2 deleted by the end, 1 ignored file saved/,
    });
    await ended.waitFor({ timeout: 30_000 });
    await moveMouseAway(page);
    await wb.screenshot('checkpoint-steps-ended');

    // The step's Restore to Before This Command: the tree just before `git clean -fdx`, `.env` written back.
    await ended.getByRole('button', { name: 'Restore to Before This Command: git clean -x' }).click();
    await waitForNotification(
      page,
      /Restored to before `git clean -x` — a new \[Restore\] version .* was added\. 1 ignored file it saved was written back\./,
    );
    assert.equal(read(folder, 'src/app.ts'), beforeCommand.app);
    assert.equal(read(folder, 'src/feature.ts'), beforeCommand.feature);
    assert.equal(read(folder, '.env'), 'API_KEY=local-only\n');
    assert.equal(
      fs.existsSync(path.join(folder, 'src/other.ts')),
      false,
      'the work after the command is in its version',
    );
    assert.match(git(folder, 'log', '-1', '--format=%s').trim(), /^\[Restore\]/);
    assert.equal(git(folder, 'rev-parse', 'HEAD~1').trim(), version, 'a new version on top; nothing rewritten');
    assert.equal(git(folder, 'status', '--porcelain').trim(), '', 'the tree is the new version');
    assertNothingLost(folder, before);
    await moveMouseAway(page);
    await wb.screenshot('checkpoint-steps-restored');
  });
});
