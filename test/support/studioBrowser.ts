/**
 * A real browser for the studio's page tests: Debian's chromium driven by playwright-core (no
 * browser download). One browser per test file, a fresh context (own sessionStorage) per test,
 * everything closed after the file. Screenshots go to the git-ignored `screenshots/studio/`.
 */
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, expect } from 'vitest';

/** Where `.ci/run` installs Debian's chromium (`apt-get install chromium`). */
export const CHROMIUM_PATH = '/usr/bin/chromium';

/** The folder the README names for the screenshots a run leaves behind. */
export const SCREENSHOT_DIR = fileURLToPath(new URL('../../screenshots/studio/', import.meta.url));

/**
 * Why the browser tests cannot run here, or undefined when they can. Only a missing chromium on a
 * developer's machine skips them; in CI (`CI=true`) chromium is installed by `.ci/run`, so a missing
 * one is not a reason to skip: the tests run and fail, saying what is missing.
 */
export const browserSkipReason: string | undefined =
  existsSync(CHROMIUM_PATH) || process.env.CI === 'true'
    ? undefined
    : `${CHROMIUM_PATH} is missing (install Debian's chromium: apt-get install chromium)`;

const LAUNCH_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** The browser of one test file. */
export interface StudioBrowser {
  /** A new page in a new context (nothing shared with other tests); uncaught page errors fail the test. */
  newPage(): Promise<Page>;
  /** Saves a full-page screenshot as `screenshots/studio/<name>.png`; returns its path. */
  screenshot(page: Page, name: string): Promise<string>;
}

/** Registers the file's hooks: launch chromium before all, close each test's context, close chromium after all. */
export function useStudioBrowser(): StudioBrowser {
  let browser: Browser | undefined;
  let contexts: BrowserContext[] = [];
  let pageErrors: string[] = [];

  // A browser that cannot start fails every test of the file (each says why), rather than the file's hook alone.
  let launchError: Error | undefined;
  beforeAll(async () => {
    if (!existsSync(CHROMIUM_PATH)) {
      launchError = new Error(
        `The studio's browser tests need Debian's chromium at ${CHROMIUM_PATH}; CI installs it in .ci/run (apt-get install chromium).`,
      );
      return;
    }
    try {
      browser = await chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: LAUNCH_ARGS });
    } catch (error) {
      launchError = new Error(`chromium (${CHROMIUM_PATH}) did not start: ${(error as Error).message}`);
    }
  });

  afterEach(async () => {
    const errors = pageErrors;
    pageErrors = [];
    await Promise.all(contexts.map((c) => c.close()));
    contexts = [];
    expect(errors, 'uncaught errors in the page').toEqual([]);
  });

  afterAll(async () => {
    await browser?.close();
  });

  return {
    async newPage() {
      if (!browser) throw launchError ?? new Error('chromium did not start');
      const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
      contexts.push(context);
      const page = await context.newPage();
      // A guard against a hang, not a speed limit (a loaded machine renders slowly).
      page.setDefaultTimeout(60_000);
      page.on('pageerror', (error) => pageErrors.push(error.message));
      return page;
    },
    async screenshot(page, name) {
      await mkdir(SCREENSHOT_DIR, { recursive: true });
      const path = `${SCREENSHOT_DIR}${name}.png`;
      await page.screenshot({ path, fullPage: true });
      return path;
    },
  };
}
