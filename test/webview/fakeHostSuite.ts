// The set-up the Version History webview suites share: one Chromium per describe, a fresh fake-host page per test
// (webviewPage.ts), a screenshot of a failing test's page, and no page error left unreported.
import * as assert from 'node:assert/strict';
import type { Browser } from 'playwright-core';
import { type FakeHostPage, launchChromium, openFakeHostPage, screenshot } from './webviewPage';

/**
 * Registers the calling describe's hooks and returns the current test's page. Call it inside the describe, before its
 * tests; the page exists from each test's start to its end.
 */
export function useFakeHostPage(): () => FakeHostPage {
  let browser: Browser | undefined;
  let host: FakeHostPage | undefined;
  before(async () => {
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
  });
  beforeEach(async () => {
    host = await openFakeHostPage(browser!);
  });
  afterEach(async function () {
    const page = host!;
    host = undefined;
    if (this.currentTest?.state === 'failed')
      await screenshot(page.page, `failed-${this.currentTest.title}`).catch(() => undefined);
    try {
      assert.deepEqual(page.errors, [], 'no page errors');
    } finally {
      await page.page.close();
    }
  });
  return () => {
    if (!host) throw new Error('the fake-host page exists only while a test runs');
    return host;
  };
}

/** Milliseconds since the epoch `n` minutes ago, made at each use (a loaded machine may show the page later). */
export const minutesAgo = (n: number): number => Date.now() - n * 60_000;
