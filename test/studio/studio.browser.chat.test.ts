/**
 * The studio's page in chromium against a running `troupe chat --studio --playground`: what is
 * typed in the chat shows on the page, and what is sent from the page reaches the chat; without
 * `--playground` the page has nothing to post with.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { browserSkipReason, useStudioBrowser } from '../support/studioBrowser.js';
import { type ChatWithStudio, chatWithStudio, studioClient } from '../support/studioClient.js';

describe.skipIf(browserSkipReason !== undefined)(
  'the studio’s page on a running troupe chat, in chromium',
  () => {
    const browser = useStudioBrowser();
    let chat: ChatWithStudio | undefined;
    afterEach(async () => {
      chat?.stdin.end('/quit\n');
      await chat?.exit;
      chat = undefined;
    });

    it('shows a line typed in the chat, and a message sent from the page reaches the chat', async () => {
      chat = chatWithStudio(['--playground']);
      const running = chat;
      await expect.poll(() => /#token=/u.test(running.stdout())).toBe(true);
      const { base, token } = studioClient(running.stdout());
      const page = await browser.newPage();
      await page.goto(`${base}#token=${token}`);
      await expect.poll(() => page.locator('#connection').getAttribute('data-status')).toBe('live');
      await page.getByRole('tab', { name: /^Playground/ }).click();

      running.stdin.write('typed in the terminal\n');
      await page.locator('li.message .text', { hasText: 'typed in the terminal' }).waitFor();

      await page.getByLabel('Message').fill('sent from the page');
      await page.getByRole('button', { name: 'Send' }).click();
      await expect.poll(() => running.stdout()).toContain('sent from the page');
      await page.locator('li.message .text', { hasText: 'sent from the page' }).waitFor();
      await browser.screenshot(page, 'chat-studio-playground');
    });

    it('without --playground the page only watches: no message box, summons disabled, and it says how to post', async () => {
      chat = chatWithStudio([]);
      const running = chat;
      await expect.poll(() => /#token=/u.test(running.stdout())).toBe(true);
      const { base, token } = studioClient(running.stdout());
      const page = await browser.newPage();
      await page.goto(`${base}#token=${token}`);
      await expect.poll(() => page.locator('#connection').getAttribute('data-status')).toBe('live');
      await page.getByRole('tab', { name: /^Playground/ }).click();
      running.stdin.write('only watched\n');
      await page.locator('li.message .text', { hasText: 'only watched' }).waitFor();
      await expect.poll(() => page.getByText(/--playground/u).count()).toBeGreaterThan(0);
      expect(await page.getByLabel('Message').isVisible()).toBe(false);
      expect(await page.getByRole('button', { name: 'Summon Rex' }).isDisabled()).toBe(true);
    });
  },
);
