import { DiscordAPIError, REST, Routes } from 'discord.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeDiscord, startFakeDiscord } from '../support/fakeDiscord.js';

const GUILD = '100000000000000001';
const CHANNEL = '200000000000000001';
const person = { id: '300000000000000001', username: 'ada' };

let fake: FakeDiscord;
let hook: { id: string; token: string };
beforeAll(async () => {
  fake = await startFakeDiscord({
    guilds: [{ id: GUILD, name: 'G', channels: [{ id: CHANNEL, name: 'general', type: 0 }] }],
  });
  hook = (await call('POST', `/channels/${CHANNEL}/webhooks`, { name: 'Troupe' })).body as typeof hook;
});
afterAll(() => fake.close());

async function call(method: string, path: string, body: unknown, bot = true) {
  const res = await fetch(`${fake.restApi}/v10${path}`, {
    method,
    headers: { 'content-type': 'application/json', ...(bot ? { authorization: `Bot ${fake.token}` } : {}) },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text === '' ? undefined : (JSON.parse(text) as unknown) };
}

const x = (n: number) => 'x'.repeat(n);
const embed = (e: Record<string, unknown>) => ({ embeds: [e] });
const field = (name: string, value: string) => ({ name, value });
const button = (label: string, i = 0) => ({ type: 2, style: 1, label, custom_id: `b${i}` });
const row = (...components: unknown[]) => ({ type: 1, components });
const select = (s: Record<string, unknown>) => ({ components: [row({ type: 3, custom_id: 's', ...s })] });
const option = (o: Record<string, string> = {}) => ({ label: 'a', value: 'a', ...o });
const modal = (m: Record<string, unknown>) => ({
  custom_id: 'm',
  title: 'Edit',
  components: [{ type: 18, label: 'Field', component: { type: 4, custom_id: 'f', style: 1 } }],
  ...m,
});
const input = (i: Record<string, unknown>) =>
  modal({
    components: [{ type: 18, label: 'Field', component: { type: 4, custom_id: 'f', style: 1, ...i } }],
  });

/** Each limit: a body right at it, one just over it, and where Discord puts the error. */
const MESSAGE_CASES: { limit: string; at: object; over: object; path: string[]; code: string }[] = [
  {
    limit: 'content 2,000',
    at: { content: x(2000) },
    over: { content: x(2001) },
    path: ['content'],
    code: 'BASE_TYPE_MAX_LENGTH',
  },
  {
    limit: 'content counts code points',
    at: { content: '😀'.repeat(2000) },
    over: { content: '😀'.repeat(2001) },
    path: ['content'],
    code: 'BASE_TYPE_MAX_LENGTH',
  },
  {
    limit: '10 embeds',
    at: { embeds: Array.from({ length: 10 }, () => ({ title: 't' })) },
    over: { embeds: Array.from({ length: 11 }, () => ({ title: 't' })) },
    path: ['embeds'],
    code: 'BASE_TYPE_MAX_LENGTH',
  },
  {
    limit: 'title 256',
    at: embed({ title: x(256) }),
    over: embed({ title: x(257) }),
    path: ['embeds', '0', 'title'],
    code: 'BASE_TYPE_MAX_LENGTH',
  },
  {
    limit: 'description 4,096',
    at: embed({ description: x(4096) }),
    over: embed({ description: x(4097) }),
    path: ['embeds', '0', 'description'],
    code: 'BASE_TYPE_MAX_LENGTH',
  },
  {
    limit: '25 fields',
    at: embed({ fields: Array.from({ length: 25 }, () => field('n', 'v')) }),
    over: embed({ fields: Array.from({ length: 26 }, () => field('n', 'v')) }),
    path: ['embeds', '0', 'fields'],
    code: 'BASE_TYPE_MAX_LENGTH',
  },
  {
    limit: 'field name 256',
    at: embed({ fields: [field(x(256), 'v')] }),
    over: embed({ fields: [field(x(257), 'v')] }),
    path: ['embeds', '0', 'fields', '0', 'name'],
    code: 'BASE_TYPE_MAX_LENGTH',
  },
  {
    limit: 'field value 1,024',
    at: embed({ fields: [field('n', x(1024))] }),
    over: embed({ fields: [field('n', x(1025))] }),
    path: ['embeds', '0', 'fields', '0', 'value'],
    code: 'BASE_TYPE_MAX_LENGTH',
  },
  {
    limit: 'footer 2,048',
    at: embed({ footer: { text: x(2048) } }),
    over: embed({ footer: { text: x(2049) } }),
    path: ['embeds', '0', 'footer', 'text'],
    code: 'BASE_TYPE_MAX_LENGTH',
  },
  {
    limit: 'author name 256',
    at: embed({ author: { name: x(256) } }),
    over: embed({ author: { name: x(257) } }),
    path: ['embeds', '0', 'author', 'name'],
    code: 'BASE_TYPE_MAX_LENGTH',
  },
  {
    limit: '6,000 characters over all embeds',
    at: {
      embeds: [
        { title: x(200), description: x(3800) },
        { description: x(1000), footer: { text: x(1000) } },
      ],
    },
    over: {
      embeds: [
        { title: x(200), description: x(3800) },
        { description: x(1000), footer: { text: x(1001) } },
      ],
    },
    path: ['embeds'],
    code: 'MAX_EMBED_SIZE_EXCEEDED',
  },
  {
    limit: '5 action rows',
    at: { components: Array.from({ length: 5 }, (_, i) => row(button('b', i))) },
    over: { components: Array.from({ length: 6 }, (_, i) => row(button('b', i))) },
    path: ['components'],
    code: 'BASE_TYPE_MAX_LENGTH',
  },
  {
    limit: '5 buttons a row',
    at: { components: [row(...Array.from({ length: 5 }, (_, i) => button('b', i)))] },
    over: { components: [row(...Array.from({ length: 6 }, (_, i) => button('b', i)))] },
    path: ['components', '0', 'components'],
    code: 'BASE_TYPE_BAD_LENGTH',
  },
  {
    limit: 'button label 80',
    at: { components: [row(button(x(80)))] },
    over: { components: [row(button(x(81)))] },
    path: ['components', '0', 'components', '0', 'label'],
    code: 'BASE_TYPE_MAX_LENGTH',
  },
  {
    limit: '25 select options',
    at: select({ options: Array.from({ length: 25 }, (_, i) => option({ value: `v${i}` })) }),
    over: select({ options: Array.from({ length: 26 }, (_, i) => option({ value: `v${i}` })) }),
    path: ['components', '0', 'components', '0', 'options'],
    code: 'BASE_TYPE_MAX_LENGTH',
  },
  {
    limit: 'select placeholder 150',
    at: select({ placeholder: x(150), options: [option()] }),
    over: select({ placeholder: x(151), options: [option()] }),
    path: ['components', '0', 'components', '0', 'placeholder'],
    code: 'BASE_TYPE_MAX_LENGTH',
  },
  ...(['label', 'value', 'description'] as const).map((key) => ({
    limit: `select option ${key} 100`,
    at: select({ options: [option({ [key]: x(100) })] }),
    over: select({ options: [option({ [key]: x(101) })] }),
    path: ['components', '0', 'components', '0', 'options', '0', key],
    code: 'BASE_TYPE_MAX_LENGTH',
  })),
];

function errorAt(body: unknown, path: string[]): { code: string; message: string }[] | undefined {
  let node = (body as { errors?: unknown }).errors as Record<string, unknown> | undefined;
  for (const key of path) node = node?.[key] as Record<string, unknown> | undefined;
  return node?._errors as { code: string; message: string }[] | undefined;
}

function expectRefused(result: { status: number; body: unknown }, path: string[], code: string) {
  expect(result.status).toBe(400);
  expect(result.body).toMatchObject({ code: 50035, message: 'Invalid Form Body' });
  expect(errorAt(result.body, path)?.map((e) => e.code)).toEqual([code]);
}

describe('the fake Discord refuses what Discord refuses (50035 Invalid Form Body), and takes what is at the limit', () => {
  describe.each(MESSAGE_CASES)('$limit', ({ at, over, path, code }) => {
    it('a bot message (create)', async () => {
      expect((await call('POST', `/channels/${CHANNEL}/messages`, at)).status).toBe(200);
      expectRefused(await call('POST', `/channels/${CHANNEL}/messages`, over), path, code);
    });
    it('a message edit', async () => {
      const posted = (await call('POST', `/channels/${CHANNEL}/messages`, { content: 'hi' })).body as {
        id: string;
      };
      const route = `/channels/${CHANNEL}/messages/${posted.id}`;
      expect((await call('PATCH', route, at)).status).toBe(200);
      expectRefused(await call('PATCH', route, over), path, code);
    });
    it('a webhook execution', async () => {
      const route = `/webhooks/${hook.id}/${hook.token}?wait=true`;
      expect((await call('POST', route, at, false)).status).toBe(200);
      expectRefused(await call('POST', route, over, false), path, code);
    });
    it('an interaction reply (callback 4), with the errors under data', async () => {
      const ok = fake.interact({ channelId: CHANNEL, user: person, command: 'avatars' });
      expect(
        (await call('POST', `/interactions/${ok.id}/${ok.token}/callback`, { type: 4, data: at }, false))
          .status,
      ).toBe(204);
      const refused = fake.interact({ channelId: CHANNEL, user: person, command: 'avatars' });
      expectRefused(
        await call(
          'POST',
          `/interactions/${refused.id}/${refused.token}/callback`,
          { type: 4, data: over },
          false,
        ),
        ['data', ...path],
        code,
      );
      expect(refused.answers).toEqual([]);
    });
  });

  it('a webhook username: 80 characters at most, and not empty', async () => {
    const route = `/webhooks/${hook.id}/${hook.token}?wait=true`;
    expect((await call('POST', route, { content: 'hi', username: x(80) }, false)).status).toBe(200);
    expectRefused(
      await call('POST', route, { content: 'hi', username: x(81) }, false),
      ['username'],
      'BASE_TYPE_BAD_LENGTH',
    );
    expectRefused(
      await call('POST', route, { content: 'hi', username: '' }, false),
      ['username'],
      'BASE_TYPE_BAD_LENGTH',
    );
  });

  const MODAL_CASES: { limit: string; at: object; over: object; path: string[]; code: string }[] = [
    {
      limit: 'title 45',
      at: modal({ title: x(45) }),
      over: modal({ title: x(46) }),
      path: ['title'],
      code: 'BASE_TYPE_BAD_LENGTH',
    },
    {
      limit: '5 components',
      at: modal({
        components: Array.from({ length: 5 }, (_, i) => ({
          type: 18,
          label: 'L',
          component: { type: 4, custom_id: `f${i}`, style: 1 },
        })),
      }),
      over: modal({
        components: Array.from({ length: 6 }, (_, i) => ({
          type: 18,
          label: 'L',
          component: { type: 4, custom_id: `f${i}`, style: 1 },
        })),
      }),
      path: ['components'],
      code: 'BASE_TYPE_BAD_LENGTH',
    },
    {
      limit: 'label 45',
      at: modal({
        components: [{ type: 18, label: x(45), component: { type: 4, custom_id: 'f', style: 1 } }],
      }),
      over: modal({
        components: [{ type: 18, label: x(46), component: { type: 4, custom_id: 'f', style: 1 } }],
      }),
      path: ['components', '0', 'label'],
      code: 'BASE_TYPE_BAD_LENGTH',
    },
    {
      limit: 'a legacy text input label 45',
      at: modal({ components: [row({ type: 4, custom_id: 'f', style: 1, label: x(45) })] }),
      over: modal({ components: [row({ type: 4, custom_id: 'f', style: 1, label: x(46) })] }),
      path: ['components', '0', 'components', '0', 'label'],
      code: 'BASE_TYPE_MAX_LENGTH',
    },
    {
      limit: 'value 4,000',
      at: input({ value: x(4000) }),
      over: input({ value: x(4001) }),
      path: ['components', '0', 'component', 'value'],
      code: 'BASE_TYPE_MAX_LENGTH',
    },
    {
      limit: 'max_length 4,000',
      at: input({ max_length: 4000 }),
      over: input({ max_length: 4001 }),
      path: ['components', '0', 'component', 'max_length'],
      code: 'NUMBER_TYPE_MAX',
    },
  ];
  it.each(MODAL_CASES)('a modal (callback 9): $limit', async ({ at, over, path, code }) => {
    const message = fake.postMessage({ channelId: CHANNEL, author: person, content: 'hi', dispatch: false });
    const ok = fake.press({ messageId: message.id, customId: 'x', user: person });
    expect(
      (await call('POST', `/interactions/${ok.id}/${ok.token}/callback`, { type: 9, data: at }, false))
        .status,
    ).toBe(204);
    const refused = fake.press({ messageId: message.id, customId: 'x', user: person });
    expectRefused(
      await call(
        'POST',
        `/interactions/${refused.id}/${refused.token}/callback`,
        { type: 9, data: over },
        false,
      ),
      ['data', ...path],
      code,
    );
  });

  it('autocomplete (callback 8): 25 choices of names up to 100', async () => {
    const choices = (n: number, name = 'a') => ({
      type: 8,
      data: { choices: Array.from({ length: n }, (_, i) => ({ name, value: `v${i}` })) },
    });
    const ok = fake.interact({ channelId: CHANNEL, user: person, command: 'summon', focused: 'avatar' });
    expect(
      (await call('POST', `/interactions/${ok.id}/${ok.token}/callback`, choices(25, x(100)), false)).status,
    ).toBe(204);
    const many = fake.interact({ channelId: CHANNEL, user: person, command: 'summon', focused: 'avatar' });
    expectRefused(
      await call('POST', `/interactions/${many.id}/${many.token}/callback`, choices(26), false),
      ['data', 'choices'],
      'BASE_TYPE_MAX_LENGTH',
    );
    const long = fake.interact({ channelId: CHANNEL, user: person, command: 'summon', focused: 'avatar' });
    expectRefused(
      await call('POST', `/interactions/${long.id}/${long.token}/callback`, choices(1, x(101)), false),
      ['data', 'choices', '0', 'name'],
      'BASE_TYPE_BAD_LENGTH',
    );
  });

  it('an interaction follow-up and an edit of the original reply are held to the message limits', async () => {
    const interaction = fake.interact({ channelId: CHANNEL, user: person, command: 'avatars' });
    await call(
      'POST',
      `/interactions/${interaction.id}/${interaction.token}/callback`,
      { type: 5, data: {} },
      false,
    );
    const original = `/webhooks/${fake.applicationId}/${interaction.token}/messages/@original`;
    expect((await call('PATCH', original, { content: x(2000) }, false)).status).toBe(200);
    expectRefused(
      await call('PATCH', original, { content: x(2001) }, false),
      ['content'],
      'BASE_TYPE_MAX_LENGTH',
    );
    const followup = `/webhooks/${fake.applicationId}/${interaction.token}`;
    expectRefused(
      await call('POST', followup, embed({ title: x(257) }), false),
      ['embeds', '0', 'title'],
      'BASE_TYPE_MAX_LENGTH',
    );
  });

  it('discord.js sees the refusal as a DiscordAPIError 50035 naming the field and the limit', async () => {
    const rest = new REST({ api: fake.restApi }).setToken(fake.token);
    const error = await rest
      .post(Routes.channelMessages(CHANNEL), {
        body: embed({
          description: x(3000),
          fields: [field('a', x(1024)), field('b', x(1024)), field('c', x(1024))],
        }),
      })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DiscordAPIError);
    expect((error as DiscordAPIError).code).toBe(50035);
    expect((error as DiscordAPIError).status).toBe(400);
    expect((error as DiscordAPIError).message).toContain('MAX_EMBED_SIZE_EXCEEDED');
  });
});
