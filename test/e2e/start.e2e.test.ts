// `npm start` as a newcomer runs it: the real scripts/start.mjs (setup check, packaging, private profile, demo
// repository made by the demo agent through the real CLI, code-server) with a temp demo folder and profile so
// it never touches a user's. It must print one URL; loaded in Chromium the extension is live on the demo
// repository and its Version History pane in Source Control lists the demo's turns; git shows the completed
// and the cancelled turn; Ctrl+C leaves no code-server behind; a second start reuses what the first one made.
import * as assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Browser } from 'playwright-core';
import { cliJson } from '../support/cliProcess';
import { assertNothingLost, contentInventory, git, head, testGitEnv } from '../support/gitFixtures';
import { openVersionHistory, screenshot, versionHistoryPane } from './harness';

const repoRoot = path.resolve(__dirname, '../../..');
const START = path.join(repoRoot, 'scripts/start.mjs');
const codeServer = createRequire(__filename)(path.join(repoRoot, 'scripts/vscode/codeServer.mjs')) as {
  launchChromium(): Promise<Browser>;
};

interface Started {
  child: ChildProcess;
  url: string;
  pid: number;
  output: () => string;
  exited: Promise<number | null>;
}

/** Runs `node scripts/start.mjs <args>` and resolves once it printed its URL line (and code-server's pid). */
function start(args: string[]): Promise<Started> {
  const child = spawn(process.execPath, [START, ...args], {
    cwd: repoRoot,
    env: testGitEnv(),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  let output = '';
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => {
      running.delete(child);
      resolve(code);
    }),
  );
  return new Promise<Started>((resolve, reject) => {
    // A hang guard, not a performance assertion: a cold machine packages and installs in well under this.
    const guard = setTimeout(() => reject(new Error(`no URL line after 5 minutes:\n${output}`)), 300_000);
    const onData = (d: Buffer) => {
      output += d;
      const url = /^(http:\/\/127\.0\.0\.1:\d+\/\?folder=\S+)$/m.exec(output)?.[1];
      const pid = /code-server: pid (\d+), port \d+/.exec(output)?.[1];
      if (url && pid) {
        clearTimeout(guard);
        servers.add(Number(pid));
        resolve({ child, url, pid: Number(pid), output: () => output, exited });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (d: Buffer) => (output += d));
    void exited.then((code) => {
      clearTimeout(guard);
      reject(new Error(`start.mjs exited (${code}) before printing its URL:\n${output}`));
    });
  });
}

/** Ctrl+C, as a user would; resolves with start.mjs's exit code. */
async function interrupt(started: Started): Promise<number | null> {
  started.child.kill('SIGINT');
  return started.exited;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function porcelain(repo: string): string[] {
  return git(repo, 'status', '--porcelain', '--untracked-files=all').split('\n').filter(Boolean).sort();
}

const running = new Set<ChildProcess>();
const servers = new Set<number>();

describe('npm start (scripts/start.mjs: demo repository, code-server, Chromium)', function () {
  this.timeout(420_000);
  const tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'avh-start-e2e-')));
  const demo = path.join(tmp, 'demo-repo');
  const args = ['--demo-repo', demo, '--profile', path.join(tmp, 'profile')];
  let first: Started | undefined;
  let browser: Browser | undefined;
  let demoHead = '';

  after(async () => {
    await browser?.close().catch(() => undefined);
    // Only when a test failed midway: stop what is still running, by pid.
    for (const child of running) child.kill('SIGKILL');
    for (const pid of servers) {
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('prepares the demo, prints one URL, and the extension is live on the demo repository in Chromium', async () => {
    first = await start(args);
    const out = first.output();
    assert.equal(out.split('\n').filter((l) => l.startsWith('http')).length, 1, 'exactly one URL line');
    assert.equal(new URL(first.url).searchParams.get('folder'), demo);
    assert.match(out, /demo repository: creating/);
    assert.match(out, /demo agent: turn \w+ completed: version [0-9a-f]{10}/);
    assert.match(out, /demo agent: turn \w+ stopped after 2 of 3 edits/);

    browser = await codeServer.launchChromium();
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    try {
      await page.goto(first.url, { waitUntil: 'domcontentloaded', timeout: 60_000 });
      await page.locator('.monaco-workbench .part.statusbar').waitFor({ state: 'visible', timeout: 60_000 });
      await page
        .locator('.explorer-folders-view .monaco-list-row', { hasText: 'greeter' })
        .first()
        .waitFor({ timeout: 60_000 });
      const item = page.locator('.part.statusbar .statusbar-item', { hasText: /undo:\d+ redo:\d+/ }).first();
      await item.waitFor({ state: 'visible', timeout: 60_000 });
      const [, undo, redo] = /undo:(\d+) redo:(\d+)/.exec(await item.innerText()) ?? [];
      assert.ok(Number(undo) >= 1, `the status bar offers an Undo (shows undo:${undo} redo:${redo})`);
      assert.equal(Number(redo), 0);
      // The Version History view (its own activity bar container) lists the demo agent's completed turn.
      await openVersionHistory(page);
      const view = versionHistoryPane(page);
      await view
        .getByRole('option', { name: /^Agent: Add a greeter module with a test, completed, by demo-agent/ })
        .waitFor({ timeout: 60_000 });
      await view.getByRole('option', { name: /^Commit: Initial commit,/ }).waitFor();
      await screenshot(page, 'start-demo-workbench');
    } catch (err) {
      console.log(
        `    screenshot: ${await screenshot(page, 'e2e-start-failed').catch(() => 'none')}\n${first.output()}`,
      );
      throw err;
    } finally {
      await browser.close();
      browser = undefined;
    }

    // git: the initial commit, the completed turn's [Agent] commit, the cancelled turn's partial changes in the tree.
    assert.deepEqual(git(demo, 'log', '--format=%s').trim().split('\n'), [
      '[Agent] Add a greeter module with a test',
      'Initial commit',
    ]);
    assert.deepEqual(git(demo, 'show', '--name-only', '--format=', 'HEAD').trim().split('\n').sort(), [
      'greeter/README.md',
      'greeter/greeting.js',
      'greeter/greeting.test.js',
    ]);
    assert.deepEqual(porcelain(demo), [' M greeter/greeting.js', '?? greeter/languages.js']);
    const status = cliJson<{ counts: { turns: number; runningTurns: number }; recovery: unknown }>(['status'], {
      cwd: demo,
    });
    assert.deepEqual(status.counts, { turns: 2, runningTurns: 0 });
    assert.equal(status.recovery, null);
    demoHead = head(demo);

    assert.equal(await interrupt(first), 0, first.output());
    assert.match(first.output(), new RegExp(`stopping code-server \\(pid ${first.pid}\\)`));
    assert.equal(alive(first.pid), false, 'code-server is gone after Ctrl+C');
  });

  it('a second start reuses the package, the installed profile and the demo repository', async () => {
    assert.ok(demoHead, 'needs the first test');
    const before = contentInventory(demo);
    const treeBefore = porcelain(demo);
    const second = await start(args);
    const out = second.output();
    assert.match(out, /packaging skipped/);
    assert.match(out, /the extension is already installed/);
    assert.match(out, /demo repository: reusing/);
    assert.doesNotMatch(out, /demo agent:/, 'no new demo turns');
    assert.notEqual(second.pid, first!.pid);
    assert.equal(await interrupt(second), 0, second.output());
    assert.equal(alive(second.pid), false, 'code-server is gone after Ctrl+C');
    assert.equal(head(demo), demoHead);
    assert.deepEqual(porcelain(demo), treeBefore);
    assertNothingLost(demo, before);
  });
});
