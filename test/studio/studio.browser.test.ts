/**
 * Troupe Studio's page in a real browser (Debian's chromium, driven by playwright-core) against
 * `openStudio` in this process on a simulated clock: the real server, store projection, runtime and
 * email assistant on the sample mailbox. Each test drives the page as a person would and checks
 * what the page shows against what the runtime did. Screenshots of each view are saved in
 * screenshots/studio/ (git-ignored) for a person to look at.
 */
import type { Locator, Page } from 'playwright-core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SimulatedClock } from '../../src/actors/clock.js';
import { createLocalMailbox } from '../../src/adapters/mail/localMailbox.js';
import { createMemoryStore } from '../../src/adapters/store/memory/memoryStore.js';
import { memoryNamespaces, PREFERENCES_KEY } from '../../src/email/triagePreferences.js';
import { silentLogger } from '../../src/logging/logger.js';
import type { TroupeStore } from '../../src/ports/store.js';
import { type OpenedStudio, openStudio } from '../../src/studio/openStudio.js';
import type { StudioActor, StudioState } from '../../src/studio/studioState.js';
import { browserSkipReason, useStudioBrowser } from '../support/studioBrowser.js';

const START = Date.parse('2026-11-25T09:00:00Z');
/** A summon thread ends within five minutes unless active (the tour's threads); well past it. */
const PAST_THREAD_TTL_MS = 6 * 60_000;

/** A state value as the page writes it: `responding.reviewing`. */
const stateText = (value: unknown): string =>
  typeof value === 'string'
    ? value
    : value && typeof value === 'object'
      ? Object.entries(value)
          .map(([k, v]) => {
            const rest = stateText(v);
            return rest === '' ? k : `${k}.${rest}`;
          })
          .join(' | ')
      : '';

describe.skipIf(browserSkipReason !== undefined)(
  `the studio's page in chromium${browserSkipReason ? ` (skipped: ${browserSkipReason})` : ''}`,
  () => {
    const browser = useStudioBrowser();
    let store: TroupeStore;
    let studio: OpenedStudio;

    beforeEach(async () => {
      store = createMemoryStore();
      studio = await openStudio({ clock: new SimulatedClock(START), store, port: 0, logger: silentLogger() });
    });
    afterEach(async () => {
      await studio.close();
      await store.close();
    });

    const state = (): StudioState => studio.studioStore.getSnapshot().context;

    async function open(): Promise<Page> {
      const page = await browser.newPage();
      await page.goto(`${studio.url}#token=${studio.token}`);
      await expect.poll(() => page.locator('#connection').getAttribute('data-status')).toBe('live');
      return page;
    }
    const tab = (page: Page, name: string) => page.getByRole('tab', { name: new RegExp(`^${name}`) }).click();
    const interrupt = (page: Page, id: string): Locator =>
      page.locator(`li.interrupt[data-interrupt-id="${id}"]`);
    const answered = (page: Page, id: string): Locator =>
      page.locator(`li.answered[data-answered-interrupt="${id}"]`);

    it('keeps the token out of the address bar and in the tab (a reload stays signed in); the keyboard moves between the views', async () => {
      const page = await open();
      expect(page.url()).toBe(studio.url);
      expect(await page.evaluate("sessionStorage.getItem('troupe-studio-token')")).toBe(studio.token);
      await page.reload();
      await expect.poll(() => page.locator('#connection').getAttribute('data-status')).toBe('live');
      await expect.poll(() => page.locator('#chart-list svg').count()).toBe(4);

      await page.getByRole('tab', { name: 'Charts' }).focus();
      await page.keyboard.press('ArrowRight');
      expect(await page.getByRole('tab', { name: /^Inbox/ }).getAttribute('aria-selected')).toBe('true');
      expect(await page.locator('#view-inbox').isVisible()).toBe(true);
      expect(await page.locator('#view-charts').isVisible()).toBe(false);
      await page.keyboard.press('End');
      expect(await page.evaluate('document.activeElement?.textContent')).toBe('Telemetry');
      expect(await page.locator('#view-telemetry').isVisible()).toBe(true);
    });

    it('answers a notify interrupt with feedback: the email moves on and the answer shows the memory version it produced', async () => {
      const notify = state().interrupts.find((i) => i.action === 'Email Assistant: notify');
      if (!notify) throw new Error('the sample mailbox raised no notify interrupt');
      const page = await open();
      await tab(page, 'Inbox');
      const item = interrupt(page, notify.id);
      // Exactly the answers a notify allows: respond and ignore.
      expect(await item.getByRole('button').allTextContents()).toEqual(['Respond', 'Ignore']);
      expect(await item.getByRole('button', { name: 'Accept' }).count()).toBe(0);
      expect(await item.getByRole('button', { name: 'Edit' }).count()).toBe(0);
      await browser.screenshot(page, 'inbox');

      await item.getByRole('button', { name: 'Respond' }).click();
      await item.getByLabel('Your feedback').fill('Great news, thanks! When can we see a demo?');
      await item.getByRole('button', { name: 'Send feedback' }).click();

      const line = answered(page, notify.id);
      await line.waitFor();
      await expect.poll(() => interrupt(page, notify.id).count()).toBe(0);
      const answer = state().answered.find((a) => a.interruptId === notify.id);
      const preferences = await store.memory.get(memoryNamespaces.triage, PREFERENCES_KEY);
      expect(answer?.type).toBe('response');
      // The email left `notifying` (the feedback asks for a reply, so it drafts one for review).
      expect(stateText(answer?.emailState)).not.toBe('notifying');
      expect(await line.locator('.email-state').textContent()).toBe(stateText(answer?.emailState));
      // The feedback taught the triage preferences: the page shows the version it wrote.
      expect(preferences?.version).toBeGreaterThan(0);
      expect(answer?.memory).toMatchObject({
        namespace: memoryNamespaces.triage,
        version: preferences?.version,
      });
      expect(await line.locator('.memory').textContent()).toContain(`version ${preferences?.version}`);
      const email = state().actors.find((a) => a.id === `email:${notify.emailId}`);
      expect(stateText(email?.value)).toBe(stateText(answer?.emailState));
      await browser.screenshot(page, 'inbox-answered');
    });

    it('edits a draft through the form and sends it: the mailbox sent the edited text', async () => {
      const draft = state().interrupts.find((i) => i.action === 'send_email_tool');
      if (!draft) throw new Error('the sample mailbox raised no draft to review');
      const page = await open();
      await tab(page, 'Inbox');
      const item = interrupt(page, draft.id);
      await item.getByRole('button', { name: 'Edit' }).click();
      const content = item.getByLabel(/^Content/);
      expect(await content.inputValue()).toBe(draft.args.content);
      const edited =
        'Hi Marco,\n\nThe limit is 600 requests a minute per key; I can raise it for you.\n\nSam';
      await content.fill(edited);
      await item.getByRole('button', { name: 'Send edited' }).click();

      const mailbox = createLocalMailbox(store.documents);
      await expect.poll(async () => (await mailbox.sent()).map((s) => s.content)).toContain(edited);
      const sent = (await mailbox.sent()).find((s) => s.content === edited);
      expect(sent?.to).toBe(draft.args.to);
      expect(sent?.subject).toBe(draft.args.subject);
      await answered(page, draft.id).waitFor();
      expect(await answered(page, draft.id).locator('.tag').textContent()).toBe('edit');
      // The answer shows at once; the email's state follows as the live stream brings it.
      await expect.poll(() => answered(page, draft.id).locator('.email-state').textContent()).toBe('done');
    });

    it('summons an avatar in the playground: it greets, with the reason shown; text stays text', async () => {
      const page = await open();
      await tab(page, 'Playground');
      const summon = page.getByRole('button', { name: 'Summon Rex' });
      expect(await summon.isEnabled()).toBe(true);
      await summon.click();
      await expect.poll(() => state().playground.avatars.find((a) => a.id === 'rex')?.present).toBe(true);
      await studio.advance(10_000);
      const greeting = state().playground.messages.find((m) => m.author.id === 'rex' && m.why);
      if (!greeting) throw new Error('Rex did not greet');
      const shown = page.locator(`li.message[data-message-id="${greeting.id}"]`);
      await shown.waitFor();
      expect(await shown.locator('.author').textContent()).toContain('Rex');
      expect(await shown.locator('.text').textContent()).toBe(greeting.text);
      expect(await shown.locator('.why').textContent()).toContain(greeting.why);
      expect(greeting.why).toMatch(/summoned/);
      await expect.poll(() => page.getByRole('button', { name: 'Dismiss Rex' }).isEnabled()).toBe(true);

      // The person writes markup and replies to Rex: it arrives as the text typed.
      await shown.getByRole('button', { name: /^Reply to Rex/ }).click();
      const typed = '<b>Rex</b>, <img src=x onerror="document.title=1"> what is your favourite meteor?';
      await page.getByLabel('Message').fill(typed);
      await page.getByRole('button', { name: 'Send' }).click();
      await expect.poll(() => state().playground.messages.some((m) => m.text === typed)).toBe(true);
      const mine = state().playground.messages.find((m) => m.text === typed);
      expect(mine?.replyTo).toBe(greeting.id);
      const line = page.locator(`li.message[data-message-id="${mine?.id}"]`);
      await line.waitFor();
      expect(await line.locator('.text').textContent()).toBe(typed);
      expect(await line.locator('b, img').count()).toBe(0);
      expect(await line.locator('.reply-of').textContent()).toContain('Rex');
      await studio.advance(10_000);
      await browser.screenshot(page, 'playground');
    });

    it('summons someone new from the playground: a name nobody has becomes an avatar that greets', async () => {
      const page = await open();
      await tab(page, 'Playground');
      await page.getByLabel('Summon someone new').fill('Gandalf');
      await page.getByRole('button', { name: 'Summon', exact: true }).click();
      await expect
        .poll(() => page.locator('#new-avatar-status').textContent())
        .toBe('Created and summoned Gandalf.');
      await expect.poll(() => page.getByRole('button', { name: 'Dismiss Gandalf' }).isEnabled()).toBe(true);
      await studio.advance(10_000);
      const greeting = state().playground.messages.find((m) => m.author.name === 'Gandalf' && m.why);
      expect(greeting?.why).toMatch(/summoned/u);
      // A name with a control character is refused, and the page says why.
      await page.getByLabel('Summon someone new').fill('Bad\u0007Name');
      await page.getByRole('button', { name: 'Summon', exact: true }).click();
      await expect
        .poll(() => page.locator('#new-avatar-status').textContent())
        .toMatch(/not summoned: That name has a control character \(U\+0007\)/u);
      expect(await page.locator('#new-avatar-status').getAttribute('class')).toContain('error');
    });

    it("follows a thread's actor in Charts: the highlighted state moves and it is done once past its time", async () => {
      const page = await open();
      await tab(page, 'Playground');
      await page.getByRole('button', { name: 'Summon Rex' }).click();
      await expect.poll(() => state().actors.some((a) => a.kind === 'thread')).toBe(true);
      await studio.advance(2_000);
      const thread = state().actors.find((a) => a.kind === 'thread') as StudioActor;
      expect(thread.status).toBe('active');

      await tab(page, 'Charts');
      await page.locator(`button.actor[data-actor-id="${thread.id}"]`).click();
      const chart = page.locator('#chart-conversationThread');
      const highlighted = () =>
        chart.locator('.active-state').evaluateAll((els) => els.map((el) => el.id.replace(/^state:/u, '')));
      await expect.poll(highlighted).toEqual(thread.stateIds);
      expect(thread.stateIds).toContain('conversationThread.active');
      expect(await page.locator('#actor-status').textContent()).toBe('active');
      expect(JSON.parse((await page.locator('#actor-context').textContent()) ?? '')).toEqual(
        state().actors.find((a) => a.id === thread.id)?.context,
      );
      await browser.screenshot(page, 'charts');

      await studio.advance(PAST_THREAD_TTL_MS);
      const ended = state().actors.find((a) => a.id === thread.id) as StudioActor;
      expect(ended.status).toBe('done');
      expect(ended.stateIds).not.toContain('conversationThread.active');
      await expect.poll(() => page.locator('#actor-status').textContent()).toBe('done');
      await expect.poll(highlighted).toEqual(ended.stateIds);
      expect(await page.locator('#actor-state').textContent()).toBe(stateText(ended.value));
      expect(await page.locator('#actor-events li').count()).toBeGreaterThan(0);
      await browser.screenshot(page, 'charts-thread-ended');
    });

    it('shows telemetry: a bar per composed-response mode and the counters', async () => {
      const page = await open();
      await tab(page, 'Playground');
      // Luna answers lookups from the demo ERP; each composed answer is logged with its mode.
      await page.getByLabel('Message').fill('Luna, status of PO-1001');
      await page.getByRole('button', { name: 'Send' }).click();
      await expect.poll(() => state().playground.messages.length).toBeGreaterThan(0);
      // Simulated time moves until the composed answer is logged; each advance settles the turn
      // (the demo ERP starting included) however long that takes in real time.
      for (let step = 0; step < 10 && state().telemetry.total === 0; step += 1) await studio.advance(2_000);
      expect(state().telemetry.total).toBeGreaterThan(0);
      await tab(page, 'Telemetry');
      const { telemetry, counters } = state();
      for (const [mode, count] of Object.entries(telemetry.modes)) {
        const bar = page.locator(`#modes-chart rect[data-mode="${mode}"]`);
        expect(await bar.locator('title').textContent()).toBe(`${mode}: ${count}`);
      }
      expect(await page.locator('#modes-chart rect').count()).toBe(Object.keys(telemetry.modes).length);
      await expect
        .poll(() => page.locator('#modes-chart p').textContent())
        .toBe(`${state().telemetry.total} composed response${state().telemetry.total === 1 ? '' : 's'}`);
      for (const [name, value] of Object.entries(counters))
        expect(await page.locator(`[data-counter="${name}"]`).textContent()).toBe(String(value));
      // The day's model usage: a row per avatar with its calls, and every call together.
      const { usage } = state();
      expect(usage.avatars.map((a) => a.id)).toEqual(['luna', 'pip', 'rex']);
      for (const a of usage.avatars)
        await expect
          .poll(() => page.locator(`#usage tr[data-usage="${a.name}"] td`).first().textContent())
          .toBe(String(state().usage.avatars.find((b) => b.id === a.id)?.totals.calls));
      expect(await page.locator('#usage tr[data-usage="All calls"] td').first().textContent()).toBe(
        String(state().usage.total.calls),
      );
      expect(await page.locator('#caps-reached').textContent()).toBe('No cap reached.');
      await browser.screenshot(page, 'telemetry');
    });

    it('says "reconnecting" when the live stream is lost', async () => {
      const page = await open();
      expect(await page.locator('#connection-text').textContent()).toBe('live');
      await studio.close();
      await expect.poll(() => page.locator('#connection').getAttribute('data-status')).toBe('reconnecting');
      expect(await page.locator('#connection-text').textContent()).toBe('reconnecting…');
    });

    it('refuses a page and requests without the token, and the page says what to do', async () => {
      for (const path of ['api/state', 'api/charts', 'api/events']) {
        const response = await fetch(new URL(path, studio.url));
        expect(response.status).toBe(401);
        expect(((await response.json()) as { error: { code: string } }).error.code).toBe(
          'TROUPE_STUDIO_UNAUTHORIZED',
        );
      }
      const bare = await browser.newPage();
      await bare.goto(studio.url);
      await bare.locator('#auth-alert').waitFor();
      expect(await bare.locator('#auth-alert').textContent()).toMatch(/Open the URL troupe studio printed/);
      expect(await bare.locator('#connection').getAttribute('data-status')).toBe('unauthorized');
      expect(await bare.locator('#main').isHidden()).toBe(true);
      // From the page itself, the API without the token is refused too.
      expect(await bare.evaluate(async () => (await fetch('/api/state')).status)).toBe(401);
      await browser.screenshot(bare, 'unauthorized');

      const wrong = await browser.newPage();
      await wrong.goto(`${studio.url}#token=not-the-token`);
      await wrong.locator('#auth-alert').waitFor();
      expect(wrong.url()).not.toContain('not-the-token');
      expect(await wrong.locator('#connection').getAttribute('data-status')).toBe('unauthorized');
    });
  },
);
