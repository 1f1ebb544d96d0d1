/**
 * The studio's page in chromium against `troupe studio`'s store studio on a SQLite directory that
 * `troupe email` filled: an interrupt answered on the page is gone from `troupe inbox list` on the
 * same directory, and one answered by `troupe inbox answer` shows answered on the page.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runEmail, runInboxAnswer, runInboxList } from '../../src/cli/email.js';
import { openStoreStudio, type StoreStudio } from '../../src/cli/studioOnStore.js';
import { silentLogger } from '../../src/logging/logger.js';
import { browserSkipReason, useStudioBrowser } from '../support/studioBrowser.js';

const quiet = { stdout: () => {}, stderr: () => {} };

describe.skipIf(browserSkipReason !== undefined)('the studio’s page on a store, in chromium', () => {
  const browser = useStudioBrowser();
  let opened: StoreStudio | undefined;
  afterEach(async () => {
    await opened?.close();
  });

  it('answers on the page go into the store; answers from `troupe inbox answer` show on the page', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'troupe-studio-browser-store-'));
    const env = { LOG_LEVEL: 'silent', TROUPE_DATA_DIR: dir, TROUPE_EMAIL_NOW: '2026-11-25T09:00:00Z' };
    expect(await runEmail({ ...quiet, env, mailboxFile: 'examples/email/sample-mailbox.jsonl' })).toBe(0);
    const listed = async () => {
      let out = '';
      expect(await runInboxList({ ...quiet, stdout: (t) => (out += t), json: true, env })).toBe(0);
      return (JSON.parse(out) as { id: string; request: { config: { allow_ignore: boolean } } }[]).map(
        (item) => item.id,
      );
    };
    const [first = '', second = ''] = await listed();
    const studio = await openStoreStudio(
      env,
      { host: '127.0.0.1', port: 0, logger: silentLogger() },
      () => {},
    );
    if (typeof studio === 'number') throw new Error(`the store studio did not open (${studio})`);
    opened = studio;
    const page = await browser.newPage();
    await page.goto(`${studio.studio.url}#token=${studio.studio.token}`);
    await expect.poll(() => page.locator('#connection').getAttribute('data-status')).toBe('live');
    await page.getByRole('tab', { name: /^Inbox/ }).click();
    const item = page.locator(`li.interrupt[data-interrupt-id="${first}"]`);
    await item.getByRole('button', { name: 'Ignore' }).click();
    await page.locator(`li.answered[data-answered-interrupt="${first}"]`).waitFor();
    expect(await listed()).not.toContain(first);

    expect(await runInboxAnswer({ ...quiet, env, id: second, type: 'ignore' })).toBe(0);
    await page.reload();
    await expect.poll(() => page.locator('#connection').getAttribute('data-status')).toBe('live');
    await page.getByRole('tab', { name: /^Inbox/ }).click();
    await page.locator(`li.answered[data-answered-interrupt="${second}"]`).waitFor();
    expect(await page.locator(`li.interrupt[data-interrupt-id="${second}"]`).count()).toBe(0);
    await browser.screenshot(page, 'inbox-on-store');
  });
});
