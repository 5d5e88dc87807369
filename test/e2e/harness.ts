// End-to-end helpers: a real code-server workbench in headless Chromium with the extension installed from
// its packaged .vsix (what users get), driven through the UI the way a user would. No smoke-test driver
// here: it hides notification toasts. Screenshots land in test-artifacts/ (git-ignored).
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Browser, FrameLocator, Locator, Page } from 'playwright-core';
import { rowsBottom } from '../webview/rowGeometry';

interface CodeServer {
  url: string;
  port: number;
  pid: number;
  workbenchUrl(folder: string, payload?: [string, string][]): string;
  logTail(): string;
  stop(): Promise<void>;
}

interface CodeServerModule {
  repoRoot: string;
  artifactsDir: string;
  startCodeServer(options: {
    port?: number;
    keepSettings?: boolean;
    extensionsDir?: string;
    userDataDir?: string;
    smokeDriver?: boolean;
    extraArgs?: string[];
    settings?: Record<string, unknown>;
    env?: Record<string, string>;
  }): Promise<CodeServer>;
  installVsix(vsixPath: string, dirs: { extensionsDir: string; userDataDir: string }): Promise<string>;
  launchChromium(): Promise<Browser>;
}

// scripts/vscode/codeServer.mjs is shared with the .mjs runners. tsc compiles import() to require() under
// "module": "commonjs" anyway; Node >= 20.19 requires ES modules without top-level await synchronously.
const codeServer = createRequire(__filename)(
  path.resolve(__dirname, '../../../scripts/vscode/codeServer.mjs'),
) as CodeServerModule;

export const VSIX_ENV = 'AVH_E2E_VSIX';
/** The test build's .vsix (failpoints kept; scripts/vscode/runE2E.mjs packages dist/test-extension/). Never shipped. */
export const TEST_VSIX_ENV = 'AVH_E2E_TEST_VSIX';

export interface Workbench {
  readonly page: Page;
  /** The running code-server (a new one after restartServer()). */
  readonly server: CodeServer;
  readonly folder: string;
  /** Saves a full-page PNG into test-artifacts/ and returns its path. */
  screenshot(name: string): Promise<string>;
  /**
   * Stops code-server (its whole process group: every extension host) and starts it again on the same port with
   * the same profile and only `env` added to its environment, then reloads the window.
   */
  restartServer(options?: { env?: Record<string, string> }): Promise<void>;
  /**
   * The extension's "Agent Version History" output channel as VS Code wrote it to the profile's log folder
   * (every window and restart of this profile, oldest first): content-free event lines.
   */
  extensionLog(): string;
  /** Reloads the window (what "Developer: Reload Window" does) and waits for the workbench. */
  reload(): Promise<void>;
  /** Closes the browser, kills code-server's process group, deletes the temp folders. Safe to call twice. */
  stop(): Promise<void>;
}

/** Installs the .vsix into a fresh profile, starts code-server (with `env` added) and opens `folder` in Chromium. */
export async function startWorkbench(options: {
  folder: string;
  vsix?: string;
  settings?: Record<string, unknown>;
  env?: Record<string, string>;
  keybindings?: readonly object[];
}): Promise<Workbench> {
  const vsix = options.vsix ?? process.env[VSIX_ENV];
  if (!vsix || !fs.existsSync(vsix))
    throw new Error(`no .vsix: pass { vsix } or set ${VSIX_ENV} (scripts/vscode/runE2E.mjs does)`);
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'avh-e2e-'));
  const extensionsDir = path.join(profile, 'exts');
  const userDataDir = path.join(profile, 'user');
  let server: CodeServer | undefined;
  let browser: Browser | undefined;
  const removeProfile = () => fs.rmSync(profile, { recursive: true, force: true });
  process.once('exit', removeProfile); // even when the run is interrupted before after() hooks
  const stop = async () => {
    await browser?.close().catch(() => undefined);
    browser = undefined;
    await server?.stop();
    process.removeListener('exit', removeProfile);
    removeProfile();
  };
  const serve = (env: Record<string, string> | undefined, restartOn?: number) =>
    codeServer.startCodeServer({
      extensionsDir,
      userDataDir,
      smokeDriver: false,
      settings: options.settings,
      env,
      port: restartOn,
      keepSettings: restartOn !== undefined,
    });
  try {
    await codeServer.installVsix(vsix, { extensionsDir, userDataDir });
    if (options.keybindings) {
      // The profile's keybindings.json: how a test reaches a command the palette does not list (test build only).
      fs.mkdirSync(path.join(userDataDir, 'User'), { recursive: true });
      fs.writeFileSync(
        path.join(userDataDir, 'User', 'keybindings.json'),
        JSON.stringify(options.keybindings, null, 2),
      );
    }
    server = await serve(options.env);
    browser = await codeServer.launchChromium();
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    await page.goto(server.workbenchUrl(options.folder), { waitUntil: 'domcontentloaded', timeout: 60_000 });
    await workbenchShown(page);
    const reload = async () => {
      await page.reload({ waitUntil: 'domcontentloaded', timeout: 60_000 });
      await workbenchShown(page);
    };
    const restartServer = async (restart: { env?: Record<string, string> } = {}) => {
      const port = server!.port;
      await server!.stop();
      server = await serve(restart.env, port);
      await reload();
    };
    return {
      page,
      get server() {
        return server!;
      },
      folder: options.folder,
      screenshot: (name) => screenshot(page, name),
      extensionLog: () => readChannelLogs(path.join(userDataDir, 'logs')),
      restartServer,
      reload,
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

async function workbenchShown(page: Page): Promise<void> {
  await page.locator('.monaco-workbench .part.statusbar').waitFor({ state: 'visible', timeout: 60_000 });
  await page
    .locator('.monaco-workbench .explorer-folders-view, .monaco-workbench .part.sidebar')
    .first()
    .waitFor({ timeout: 30_000 });
}

/** The fields of /proc/<pid>/stat after the parenthesised command name: state ppid pgrp … (throws once it ended). */
function procStatFields(pid: string): string[] {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

/**
 * The pids of the extension host processes code-server (process group `serverPid`) runs now, read from /proc:
 * the Node processes forked with `--type=extensionHost`.
 */
export function extensionHostPids(serverPid: number): number[] {
  const pids: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // The fields after the parenthesised command name: state ppid pgrp …
      const pgrp = Number(procStatFields(entry)[2]);
      if (pgrp !== serverPid) continue;
      if (fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').includes('--type=extensionHost'))
        pids.push(Number(entry));
    } catch {
      // the process ended while we looked
    }
  }
  return pids;
}

/**
 * The git processes running now in `cwd` whose arguments include every one of `args`, each with its parent's pid
 * (the process that started it), read from /proc.
 */
export function gitProcessesIn(cwd: string, args: readonly string[]): { pid: number; parent: number }[] {
  const found: { pid: number; parent: number }[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const argv = fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      if (path.basename(argv[0] ?? '') !== 'git' || !args.every((a) => argv.includes(a))) continue;
      if (fs.readlinkSync(`/proc/${entry}/cwd`) !== cwd) continue;
      found.push({ pid: Number(entry), parent: Number(procStatFields(entry)[1]) });
    } catch {
      // the process ended while we looked
    }
  }
  return found;
}

export async function screenshot(page: Page, name: string): Promise<string> {
  fs.mkdirSync(codeServer.artifactsDir, { recursive: true });
  const file = path.join(codeServer.artifactsDir, `${name.replace(/[^\w.-]+/g, '-')}.png`);
  await page.screenshot({ path: file, timeout: 10_000 });
  return file;
}

/** Saves a PNG of one element (a pane, a notification) into test-artifacts/ and returns its path. */
export async function elementScreenshot(locator: Locator, name: string): Promise<string> {
  fs.mkdirSync(codeServer.artifactsDir, { recursive: true });
  const file = path.join(codeServer.artifactsDir, `${name.replace(/[^\w.-]+/g, '-')}.png`);
  await locator.screenshot({ path: file, timeout: 10_000 });
  return file;
}

/** The Version History pane's DOM: VS Code lays webviews over the workbench (not inside the pane); ours is the only one open. */
export function versionHistoryPane(page: Page): FrameLocator {
  return page.frameLocator('iframe.webview.ready').frameLocator('#active-frame');
}

/** The activity bar's item of the Version History view container (the view is the only view in it). */
export function versionHistoryActivityItem(page: Page): Locator {
  return page.locator('.part.activitybar .action-item', {
    has: page.locator('a.action-label[aria-label^="Agent Version History"]'),
  });
}

/**
 * Opens the Version History view as a user does: its icon in the activity bar, clicked when its container is not
 * the one shown (a click then would close the side bar). Right after a reload the icon can show as the active
 * one while the side bar is still empty: then it is clicked after a while all the same.
 */
export async function openVersionHistory(page: Page): Promise<void> {
  const item = versionHistoryActivityItem(page);
  const bar = versionHistorySideBar(page);
  await item.waitFor({ state: 'visible', timeout: 60_000 });
  const deadline = Date.now() + 60_000;
  for (let waited = 0; ; waited++) {
    const active = (await item.getAttribute('class'))?.split(/\s+/).includes('checked');
    if (!active || waited === 5) await item.locator('a').click();
    try {
      await bar.waitFor({ state: 'visible', timeout: 1_000 });
      return;
    } catch (err) {
      if (Date.now() > deadline) throw err;
      if (waited === 5) waited = -1;
    }
  }
}

/** The side bar while it shows the Version History container: its title (with the view's actions) and the view. */
export function versionHistorySideBar(page: Page): Locator {
  return page.locator('.part.sidebar', {
    has: page.locator('.composite.title', { hasText: /Agent Version History/i }),
  });
}

/** Saves a PNG of the Version History side bar (its title bar and the view), cut a little below the last row. */
export async function versionHistoryScreenshot(page: Page, name: string): Promise<string> {
  const bar = await versionHistorySideBar(page).boundingBox();
  const frame = await page.locator('iframe.webview.ready').boundingBox();
  if (!bar || !frame) throw new Error('the Version History view is not shown');
  const bottom = frame.y + (await versionHistoryPane(page).locator('body').evaluate(rowsBottom)) + 12;
  fs.mkdirSync(codeServer.artifactsDir, { recursive: true });
  const file = path.join(codeServer.artifactsDir, `${name.replace(/[^\w.-]+/g, '-')}.png`);
  const height = Math.min(bar.height, Math.max(bottom - bar.y, 120));
  await page.screenshot({ path: file, clip: { x: bar.x, y: bar.y, width: bar.width, height }, timeout: 10_000 });
  return file;
}

/**
 * Runs a command by its palette title: F1, type, wait for the row whose aria-label starts with the
 * title, select it. Right after load, and longer on a busy machine (end-to-end files run two at a time), the
 * palette lists no extension commands yet: Escape and try again, 5 s at a time, until `timeoutMs` has passed.
 */
export async function runCommand(page: Page, title: string, options: { timeoutMs?: number } = {}): Promise<void> {
  const deadline = Date.now() + (options.timeoutMs ?? 60_000);
  const widget = page.locator('.quick-input-widget');
  for (let attempt = 1; ; attempt++) {
    await page.keyboard.press('F1');
    await widget.waitFor({ state: 'visible', timeout: 10_000 });
    const input = widget.locator('input');
    await input.fill(`>${title}`);
    const row = widget.locator(`.monaco-list-row[aria-label^=${cssString(title)}]`).first();
    try {
      await row.waitFor({ state: 'visible', timeout: 5_000 });
    } catch (err) {
      await page.keyboard.press('Escape');
      if (Date.now() >= deadline)
        throw new Error(`command palette has no "${title}" after ${attempt} tries: ${(err as Error).message}`);
      await page.waitForTimeout(1_500);
      continue;
    }
    // Enter runs the focused row; a better fuzzy match may sit above ours, so click ours when it is not focused.
    if ((await row.getAttribute('class'))?.split(/\s+/).includes('focused')) await page.keyboard.press('Enter');
    else await row.click();
    // The palette closes, or (a command that asks next, such as Restore Version…) shows other rows: ours is gone.
    await row.waitFor({ state: 'hidden', timeout: 10_000 });
    return;
  }
}

/** A notification (toast, or an item in the notification center) containing `text`. Opens the center when no toast shows. */
export async function waitForNotification(
  page: Page,
  text: string | RegExp,
  options: { timeout?: number } = {},
): Promise<Locator> {
  const timeout = options.timeout ?? 30_000;
  const notification = page
    .locator('.notification-toast, .notifications-center.visible .notification-list-item', { hasText: text })
    .first();
  try {
    await notification.waitFor({ state: 'visible', timeout: timeout / 2 });
    return notification;
  } catch {
    // Toasts hide after a while (and never show while a modal is up): the center keeps them all. A tooltip left
    // open where the pointer rests (a status bar item clicked before) must not take the bell's click.
    await moveMouseAway(page);
    await page.locator('#status\\.notifications, .statusbar-item[id$="status.notifications"]').first().click();
    await moveMouseAway(page); // the bell's tooltip opens over the bottom of the center, where the buttons are
    await notification.waitFor({ state: 'visible', timeout: timeout / 2 });
    return notification;
  }
}

/** Clicks `buttonName` on the notification that contains `text`, with no tooltip left open over it. */
export async function clickNotificationButton(
  page: Page,
  text: string | RegExp,
  buttonName: string,
  options: { timeout?: number } = {},
): Promise<void> {
  const notification = await waitForNotification(page, text, options);
  await moveMouseAway(page);
  await notification.getByRole('button', { name: buttonName }).click();
}

/**
 * Moves the pointer to the middle of the editor area and waits for the workbench's tooltips to close. A tooltip
 * stays open while the pointer is on it, so one left over a button (the notification bell's, over the bottom of
 * the notification center) would take every click aimed at that button.
 */
export async function moveMouseAway(page: Page): Promise<void> {
  const editor = await page.locator('.monaco-workbench .part.editor').first().boundingBox();
  const viewport = page.viewportSize();
  const x = editor ? editor.x + editor.width / 2 : (viewport?.width ?? 800) / 2;
  const y = editor ? editor.y + editor.height / 2 : (viewport?.height ?? 600) / 2;
  await page.mouse.move(x, y);
  await page.locator('.workbench-hover').first().waitFor({ state: 'hidden', timeout: 10_000 });
}

/** Every log file VS Code wrote for our output channel under `logsDir`, concatenated in name order. */
function readChannelLogs(logsDir: string): string {
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name.endsWith('Agent Version History.log')) files.push(full);
    }
  };
  if (fs.existsSync(logsDir)) walk(logsDir);
  return files
    .sort()
    .map((f) => fs.readFileSync(f, 'utf8'))
    .join('');
}

function cssString(value: string): string {
  return `"${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}
