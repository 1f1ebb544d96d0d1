/**
 * `troupe chat --studio`: the studio served from inside the running chat, over its own runtime
 * (the live actors: a line typed in the chat shows in the page's channel). The page posts into
 * the chat's channel only with `--playground`.
 */
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { type CliIo, runCli } from '../../src/cli/program.js';
import { studioClient } from '../support/studioClient.js';

async function chatWithStudio(args: string[]) {
  const stdin = new PassThrough();
  let stdout = '';
  const io: CliIo = {
    stdout: (t) => (stdout += t),
    stderr: () => {},
    env: { TROUPE_STORE: 'memory', LOG_LEVEL: 'silent', NO_COLOR: '1' },
    isTTY: false,
    stdin,
  };
  const exit = runCli(['chat', '--studio', ...args], io);
  await expect.poll(() => /#token=/u.test(stdout)).toBe(true);
  const { api } = studioClient(stdout);
  return { stdin, exit, api, stdout: () => stdout };
}

describe('troupe chat --studio', () => {
  it('serves the chat’s own runtime: a line typed in the chat shows in the page; the page only watches', async () => {
    const chat = await chatWithStudio([]);
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
    const chat = await chatWithStudio(['--playground']);
    expect((await chat.api('state')).body.playground.readOnly).toBeUndefined();
    expect((await chat.api('playground/message', { text: 'from the page' })).status).toBe(202);
    await expect.poll(() => chat.stdout()).toContain('from the page');
    chat.stdin.end('/quit\n');
    expect(await chat.exit).toBe(0);
  });
});
