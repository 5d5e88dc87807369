// The Vite-built Version History page (dist/webview/) in real Chromium with a fake host in the page: a
// stand-in for VS Code's `acquireVsCodeApi` that records what the webview posts and answers each request
// with one reply (or the error a test asks for). Host → webview messages go through window.postMessage,
// exactly as VS Code delivers them.
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { historyViewHtml } from '../../src/vscode/historyView/html';
import type { HostMessage, VersionRow, VersionsView } from '../../src/vscode/historyView/protocol';

// The page's globals, as the callbacks passed to page.evaluate see them (this project compiles without the DOM lib).
declare const window: {
  postMessage(message: unknown, targetOrigin: string): void;
  __posted: Array<Record<string, unknown>>;
  __failNext: Record<string, string>;
};

const codeServer = createRequire(__filename)(path.resolve(__dirname, '../../../scripts/vscode/codeServer.mjs')) as {
  repoRoot: string;
  artifactsDir: string;
  launchChromium(): Promise<Browser>;
};

export const launchChromium = () => codeServer.launchChromium();
const assets = path.join(codeServer.repoRoot, 'dist', 'webview');
const ORIGIN = 'http://webview.test';

/**
 * The page VS Code loads (historyViewHtml: the same CSP, stylesheet, font and nonce rules), served from ORIGIN; the
 * fake host is an init script, not part of the app.
 */
const PAGE = historyViewHtml(
  { cspSource: ORIGIN, scriptUri: `${ORIGIN}/index.js`, styleUri: `${ORIGIN}/index.css` },
  'test',
);

/** Dark-theme values for the variables the view uses, so screenshots look like VS Code. */
const THEME = `
  document.documentElement.style.cssText = [
    '--vscode-font-family: sans-serif', '--vscode-font-size: 13px', '--vscode-foreground: #cccccc',
    '--vscode-descriptionForeground: #9d9d9d', '--vscode-list-activeSelectionBackground: #04395e',
    '--vscode-list-activeSelectionForeground: #ffffff', '--vscode-list-inactiveSelectionBackground: #37373d',
    '--vscode-list-hoverBackground: #2a2d2e', '--vscode-badge-background: #616161', '--vscode-badge-foreground: #ffffff',
    '--vscode-button-background: #0e639c', '--vscode-button-foreground: #ffffff', '--vscode-focusBorder: #007fd4',
    '--vscode-textLink-foreground: #3794ff', '--vscode-errorForeground: #f48771', '--vscode-charts-blue: #3794ff',
    '--vscode-charts-green: #89d185', '--vscode-menu-background: #252526', '--vscode-progressBar-background: #0e70c0',
    '--vscode-icon-foreground: #c5c5c5', '--vscode-toolbar-hoverBackground: rgba(90, 93, 94, 0.31)',
  ].join(';');
  document.body.style.background = '#181818';
`;

export interface FakeHostPage {
  page: Page;
  errors: string[];
  /** What the webview posted, in order. */
  posted(): Promise<Array<Record<string, unknown>>>;
  /** Delivers a host message (or any raw value) to the webview. */
  send(message: HostMessage | unknown): Promise<void>;
  showView(view: VersionsView): Promise<void>;
  /** The next request of `type` gets an error reply with `message` instead of a reply. */
  failNext(type: string, message: string): Promise<void>;
}

export async function openFakeHostPage(browser: Browser): Promise<FakeHostPage> {
  if (!fs.existsSync(path.join(assets, 'index.js')))
    throw new Error(`no ${assets}/index.js: run 'npx vite build' first`);
  const page = await browser.newPage({ viewport: { width: 420, height: 600 } });
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  await page.route(`${ORIGIN}/**`, (route) => {
    const name = new URL(route.request().url()).pathname.slice(1);
    if (name === '') return route.fulfill({ contentType: 'text/html', body: PAGE });
    const file = path.join(assets, path.basename(name));
    if (!fs.existsSync(file)) return route.fulfill({ status: 404, body: '' });
    const types: Record<string, string> = { '.css': 'text/css', '.ttf': 'font/ttf' };
    return route.fulfill({
      contentType: types[path.extname(name)] ?? 'text/javascript',
      body: fs.readFileSync(file),
    });
  });
  await page.addInitScript(`
    window.__posted = [];
    window.__failNext = {};
    let state;
    const answer = (m) => {
      const error = window.__failNext[m.type];
      delete window.__failNext[m.type];
      window.postMessage(error ? { type: 'error', id: m.id, message: error } : { type: 'reply', id: m.id }, '*');
    };
    window.acquireVsCodeApi = () => ({
      postMessage(m) {
        window.__posted.push(JSON.parse(JSON.stringify(m)));
        if (typeof m.id === 'number') setTimeout(() => answer(m), 0);
      },
      getState() { return state; },
      setState(s) { state = s; },
    });
    document.addEventListener('DOMContentLoaded', () => { ${THEME} });
  `);
  await page.goto(`${ORIGIN}/`);
  await page.waitForFunction(() => window.__posted.length > 0);
  const host: FakeHostPage = {
    page,
    errors,
    posted: () => page.evaluate(() => window.__posted),
    send: (message) => page.evaluate((m) => window.postMessage(m, '*'), message as object),
    showView: (view) => host.send({ type: 'didChangeVersions', view }),
    failNext: (type, message) =>
      page.evaluate(
        ([t, msg]) => {
          window.__failNext[t] = msg;
        },
        [type, message],
      ),
  };
  return host;
}

export async function screenshot(page: Page, name: string): Promise<void> {
  fs.mkdirSync(codeServer.artifactsDir, { recursive: true });
  await page.screenshot({ path: path.join(codeServer.artifactsDir, `webview-${name}.png`) });
}

let counter = 0;
/** A row with every field set; override what a test is about. */
export function row(overrides: Partial<VersionRow> = {}): VersionRow {
  counter++;
  return {
    oid: counter.toString(16).padStart(40, '0'),
    label: `Version ${counter}`,
    kind: 'user',
    time: Math.floor(Date.now() / 1000) - 300,
    filesChanged: 2,
    insertions: 10,
    deletions: 3,
    turn: null,
    isHead: false,
    ...overrides,
  };
}

export function turn(overrides: Partial<NonNullable<VersionRow['turn']>> = {}): NonNullable<VersionRow['turn']> {
  return {
    id: `turn-${++counter}`,
    chatId: 'chat-1',
    chatTitle: null,
    agent: 'claude-code',
    outcome: 'completed',
    undone: false,
    canUndo: true,
    canContinueChat: false,
    chatIndex: 1,
    ...overrides,
  };
}

export function versions(
  rows: VersionRow[],
  extra: Partial<Extract<VersionsView, { kind: 'versions' }>> = {},
): VersionsView {
  return { kind: 'versions', branch: 'main', rows, hasMore: false, canRedo: false, hasTurns: true, ...extra };
}
