/**
 * `troupe chat --studio`: the studio served from inside the running chat, over its own runtime
 * (the live actors: a line typed in the chat shows in the page's channel). The page posts into
 * the chat's channel only with `--playground`.
 */
import { describe, expect, it } from 'vitest';
import { chatWithStudio, studioClient } from '../support/studioClient.js';

/** `troupe chat --studio <args>`, once its studio's URL is printed, with the studio's API. */
async function chatAndStudio(args: string[]) {
  const chat = chatWithStudio(args);
  await expect.poll(() => /#token=/u.test(chat.stdout())).toBe(true);
  return { ...chat, api: studioClient(chat.stdout()).api };
}

describe('troupe chat --studio', () => {
  it('serves the chat’s own runtime: a line typed in the chat shows in the page; the page only watches', async () => {
    const chat = await chatAndStudio([]);
    const state = (await chat.api('state')).body;
    expect(state.playground.channel).toEqual({ platform: 'terminal', id: 'lobby' });
    expect(state.playground.readOnly).toMatch(/--playground/u);
    chat.stdin.write('hello from the terminal\n');
    await expect
      .poll(async () =>
        (await chat.api('state')).body.playground.messages.map((m: { text: string }) => m.text),
      )
      .toContain('hello from the terminal');
    const post = await chat.api('playground/message', { text: 'from the page' });
    expect(post.status).toBe(403);
    expect(post.body.error.code).toBe('TROUPE_STUDIO_READ_ONLY');
    chat.stdin.end('/quit\n');
    expect(await chat.exit).toBe(0);
    expect(chat.stdout()).not.toContain('from the page');
  });

  it('--playground: the page posts into the chat’s channel, and the chat prints it', async () => {
    const chat = await chatAndStudio(['--playground']);
    expect((await chat.api('state')).body.playground.readOnly).toBeUndefined();
    expect((await chat.api('playground/message', { text: 'from the page' })).status).toBe(202);
    await expect.poll(() => chat.stdout()).toContain('from the page');
    chat.stdin.end('/quit\n');
    expect(await chat.exit).toBe(0);
  });
});
