import { Writable } from 'node:stream';
import { Subject } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { createRuntime } from '../../src/createRuntime.js';
import { createLogger, silentLogger } from '../../src/logging/logger.js';
import { createTestRuntime, mockModel, RecordingTransport, SimulatedClock } from '../../src/testing/index.js';
import { getterThrowing, throwingProxy, unreadableThrowables } from '../support/hostileValues.js';

const room = { kind: 'test', id: 'room' };

describe('runtime events', () => {
  it('rejects an invalid event with a typed error, logs it, and carries on', async () => {
    const t = createTestRuntime({ avatars: [{ id: 'nova', name: 'Nova', residentIn: ['test:room'] }] });
    const result = t.runtime.send({ type: 'channel.message', channel: room, text: 'no id, no author' });
    expect(result.accepted).toBe(false);
    expect(t.errors[0]?.code).toBe('TROUPE_EVENT_INVALID');
    expect(t.errors[0]?.message).toMatch(/messageId/);
    expect(t.errors[0]?.message).toMatch(/author/);
    expect(t.runtime.send({ type: 'nonsense' }).accepted).toBe(false);
    expect(t.runtime.send(null).accepted).toBe(false);
    await t.say('Nova, still there?');
    expect(t.transport.sent).toHaveLength(1);
    await t.stop();
  });

  it('refuses an event it cannot read (a getter that throws, a Proxy, a revoked Proxy) instead of throwing, also through connect()', async () => {
    const t = createTestRuntime({ avatars: [{ id: 'nova', name: 'Nova', residentIn: ['test:room'] }] });
    const unreadable = (messageId: string) =>
      Object.defineProperty(
        {
          type: 'channel.message',
          channel: room,
          messageId,
          author: { kind: 'human', id: 'u1', name: 'Ada' },
        },
        'text',
        {
          enumerable: true,
          get() {
            throw new Error('payload could not be decoded');
          },
        },
      );
    expect(t.runtime.send(unreadable('m0'))).toMatchObject({
      accepted: false,
      error: { code: 'TROUPE_EVENT_INVALID' },
    });
    // Proxies: every trap throws, one revoked, one that throws only when the text is read.
    const throwing = new Proxy(
      {},
      {
        get: () => {
          throw new Error('trap get');
        },
        ownKeys: () => {
          throw new Error('trap ownKeys');
        },
        getPrototypeOf: () => {
          throw new Error('trap getPrototypeOf');
        },
        has: () => {
          throw new Error('trap has');
        },
      },
    );
    const revocable = Proxy.revocable({ type: 'channel.message' }, {});
    revocable.revoke();
    const lateTrap = new Proxy(
      {
        type: 'channel.message',
        channel: room,
        messageId: 'm9',
        author: { kind: 'human', id: 'u1', name: 'Ada' },
        text: 'Nova, hi',
      },
      {
        get: (target, key) => {
          if (key === 'text') throw new Error('late trap');
          return Reflect.get(target, key);
        },
      },
    );
    for (const hostile of [throwing, revocable.proxy, lateTrap])
      expect(t.runtime.send(hostile)).toMatchObject({
        accepted: false,
        error: { code: 'TROUPE_EVENT_INVALID' },
      });
    t.errors.length = 0;
    const events$ = new Subject<unknown>();
    const subscription = t.runtime.connect(events$);
    events$.next(throwing);
    events$.next(revocable.proxy);
    events$.next(unreadable('m1'));
    events$.next({
      type: 'channel.message',
      channel: room,
      messageId: 'm2',
      author: { kind: 'human', id: 'u1', name: 'Ada' },
      text: 'Nova, hello',
    });
    await t.settle();
    expect(subscription.closed).toBe(false);
    expect(t.transport.sent).toHaveLength(1);
    expect(t.errors.map((e) => e.code)).toEqual([
      'TROUPE_EVENT_INVALID',
      'TROUPE_EVENT_INVALID',
      'TROUPE_EVENT_INVALID',
    ]);
    expect(t.errors[2]?.message).toContain('payload could not be decoded');
    await t.stop();
  });

  it('refuses an event whose getter throws something unreadable too (a Proxy, a revoked Proxy, an Error whose fields throw, a Symbol), logs it, and answers the next message, also through connect()', async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(chunk.toString('utf8'));
        done();
      },
    });
    const t = createTestRuntime({
      logger: createLogger({ level: 'debug', destination: sink }),
      avatars: [{ id: 'nova', name: 'Nova', residentIn: ['test:room'] }],
    });
    const message = {
      type: 'channel.message',
      channel: room,
      messageId: 'm',
      author: { kind: 'human', id: 'u1', name: 'Ada' },
    };
    for (const [label, thrown] of unreadableThrowables) {
      const result = t.runtime.send(getterThrowing(message, 'text', thrown));
      expect(result, label).toMatchObject({ accepted: false, error: { code: 'TROUPE_EVENT_INVALID' } });
      expect(result.accepted || result.error.message, label).toMatch(/could not be read.*send plain data/);
    }
    // A type nobody can read is refused, and its error holds no part of it.
    const odd = t.runtime.send({ type: throwingProxy(), channel: room });
    expect(odd).toMatchObject({ accepted: false, error: { code: 'TROUPE_EVENT_INVALID' } });
    expect(JSON.stringify(t.errors.map((e) => e.toJSON()))).not.toContain('trap');
    expect(lines.filter((line) => line.includes('TROUPE_EVENT_INVALID'))).toHaveLength(
      unreadableThrowables.length + 1,
    );

    const events$ = new Subject<unknown>();
    const subscription = t.runtime.connect(events$);
    for (const [, thrown] of unreadableThrowables) events$.next(getterThrowing(message, 'channel', thrown));
    events$.next({ ...message, messageId: 'after', text: 'Nova, are you there?' });
    await t.settle();
    expect(subscription.closed).toBe(false);
    expect(t.transport.sent).toHaveLength(1);
    await t.stop();
  });

  it('disconnects a stream that fails with an unreadable error with TROUPE_STREAM_FAILED, throwing nothing', async () => {
    const t = createTestRuntime({
      logger: createLogger({
        level: 'debug',
        destination: new Writable({ write: (_c, _e, done) => done() }),
      }),
      avatars: [{ id: 'nova', name: 'Nova', residentIn: ['test:room'] }],
    });
    for (const [label, thrown] of unreadableThrowables) {
      const events$ = new Subject<unknown>();
      const subscription = t.runtime.connect(events$);
      t.errors.length = 0;
      expect(() => events$.error(thrown()), label).not.toThrow();
      expect(subscription.closed, label).toBe(true);
      expect(
        t.errors.map((e) => e.code),
        label,
      ).toEqual(['TROUPE_STREAM_FAILED']);
    }
    await t.say('Nova, still there?');
    expect(t.transport.sent).toHaveLength(1);
    await t.stop();
  });

  it('ignores a message it has already seen (a gateway redelivery), so nobody answers twice', async () => {
    const t = createTestRuntime({ avatars: [{ id: 'nova', name: 'Nova', residentIn: ['test:room'] }] });
    await t.say('Nova, once only', { messageId: 'dup-1' });
    await t.advance(60_000);
    await t.say('Nova, once only', { messageId: 'dup-1' });
    expect(t.transport.sent).toHaveLength(1);
    expect((await t.history.all('test:room')).filter((e) => e.messageId === 'dup-1')).toHaveLength(1);
    await t.stop();
  });

  it('rejects a summon of an avatar nobody defined', async () => {
    const t = createTestRuntime();
    const result = t.runtime.send({
      type: 'avatar.summon',
      channel: room,
      avatarId: 'ghost',
      by: { id: 'u1', name: 'Ada' },
    });
    expect(result).toMatchObject({ accepted: false, error: { code: 'TROUPE_AVATAR_UNKNOWN' } });
    expect(t.runtime.activeChannels()).toEqual([]);
    await t.stop();
  });

  it('refuses invalid avatar definitions at creation with every problem named', () => {
    expect(() =>
      createRuntime({
        avatars: [
          { id: 'a', name: 'A' },
          { id: 'a', name: '' },
        ],
        logger: silentLogger(),
      }),
    ).toThrow(/duplicate avatar id "a".*|avatars\.1\.name/s);
  });

  it('takes events from an RxJS stream with connect()', async () => {
    const t = createTestRuntime({ avatars: [{ id: 'nova', name: 'Nova', residentIn: ['test:room'] }] });
    const inbound = new Subject<unknown>();
    const subscription = t.runtime.connect(inbound);
    inbound.next({
      type: 'channel.message',
      channel: room,
      messageId: 'x1',
      author: { kind: 'human', id: 'u1', name: 'Ada' },
      text: 'Hi Nova',
    });
    inbound.next({ type: 'channel.message', channel: room });
    await t.settle();
    expect(t.transport.sent).toHaveLength(1);
    expect(t.errors.map((e) => e.code)).toEqual(['TROUPE_EVENT_INVALID']);
    subscription.unsubscribe();
    await t.stop();
  });
});

describe('runtime options', () => {
  it.each([
    ['sendTimeoutMs', { sendTimeoutMs: Number.NaN }],
    ['stopDeadlineMs', { stopDeadlineMs: Number.POSITIVE_INFINITY }],
    ['retry.maxAttempts', { retry: { maxAttempts: 0 } }],
    ['persistence.passivateAfterMs', { persistence: { passivateAfterMs: -1 } }],
    ['historyLimit', { historyLimit: 2.5 }],
    // Longer than a timer can wait: setTimeout would fire at once.
    ['sendTimeoutMs', { sendTimeoutMs: 2 ** 31 }],
    ['retry.maxDelayMs', { retry: { maxDelayMs: 30 * 86_400_000 } }],
    ['persistence.flushIntervalMs', { persistence: { flushIntervalMs: 2 ** 40 } }],
  ])('refuses %s that would switch a protection off, naming it (TROUPE_CONFIG_INVALID)', (name, options) => {
    const create = () =>
      createRuntime({ avatars: [{ id: 'nova', name: 'Nova' }], logger: silentLogger(), ...options });
    expect(create).toThrow(expect.objectContaining({ code: 'TROUPE_CONFIG_INVALID' }));
    expect(create).toThrow(name);
  });
});

describe('actors', () => {
  it('activates a channel actor on demand and stops it when the channel is finished', async () => {
    const t = createTestRuntime({ config: { summonConversationDurationMs: 60_000 } });
    await t.summon('nova');
    expect(t.runtime.activeChannels()).toEqual(['test:room']);
    await t.dismiss('nova');
    await t.advance(10 * 60_000);
    expect(t.runtime.activeChannels()).toEqual([]);
    const stopped = t.inspection.filter((e) => e.type === 'actor.stopped');
    expect(stopped).toEqual([expect.objectContaining({ channelKey: 'test:room', reason: 'finished' })]);
    await t.stop();
  });

  it('runs channels concurrently: a slow generation in one channel does not hold up another', async () => {
    const clock = new SimulatedClock();
    let release: (() => void) | undefined;
    const model = mockModel(async ({ channelKey }) => {
      if (channelKey === 'test:slow') await new Promise<void>((resolve) => (release = resolve));
      return `answer in ${channelKey}`;
    });
    const transport = new RecordingTransport();
    const runtime = createRuntime({
      avatars: [{ id: 'nova', name: 'Nova', residentIn: ['test:slow', 'test:fast'] }],
      model,
      transports: [transport],
      clock,
      logger: silentLogger(),
    });
    const say = (id: string) =>
      runtime.send({
        type: 'channel.message',
        channel: { kind: 'test', id },
        messageId: `${id}-1`,
        author: { kind: 'human', id: 'u', name: 'U' },
        text: 'Nova?',
      });
    say('slow');
    say('fast');
    await new Promise((r) => setImmediate(r));
    expect(transport.texts()).toEqual(['answer in test:fast']);
    release?.();
    await runtime.whenIdle();
    expect(transport.texts()).toEqual(['answer in test:fast', 'answer in test:slow']);
    await runtime.stop();
  });

  it('stop() waits for in-flight work, then refuses new events', async () => {
    let release: (() => void) | undefined;
    const model = mockModel(async () => {
      await new Promise<void>((resolve) => (release = resolve));
      return 'late but here';
    });
    const transport = new RecordingTransport();
    const runtime = createRuntime({
      avatars: [{ id: 'nova', name: 'Nova', residentIn: ['test:room'] }],
      model,
      transports: [transport],
      clock: new SimulatedClock(),
      logger: silentLogger(),
    });
    runtime.send({
      type: 'channel.message',
      channel: room,
      messageId: 'm1',
      author: { kind: 'human', id: 'u', name: 'U' },
      text: 'Nova?',
    });
    let stopped = false;
    const stopping = runtime.stop().then(() => (stopped = true));
    await new Promise((r) => setImmediate(r));
    expect(stopped).toBe(false);
    expect(runtime.send({ type: 'avatar.dismiss', channel: room, avatarId: 'nova' })).toMatchObject({
      accepted: false,
      error: { code: 'TROUPE_RUNTIME_STOPPED' },
    });
    release?.();
    await stopping;
    expect(transport.texts()).toEqual(['late but here']);
  });

  it('a dismissed avatar mid-generation says nothing', async () => {
    let release: (() => void) | undefined;
    const model = mockModel(async () => {
      await new Promise<void>((resolve) => (release = resolve));
      return 'too late';
    });
    const t = createTestRuntime({ model, settleLimitMs: 50 });
    t.runtime.send({ type: 'avatar.summon', channel: room, avatarId: 'nova', by: { id: 'u1', name: 'Ada' } });
    await new Promise((r) => setImmediate(r));
    expect(release).toBeDefined(); // the greeting is being generated
    await t.dismiss('nova').catch(() => undefined); // cannot settle while the model holds on
    release?.();
    await t.settle();
    expect(t.transport.sent).toEqual([]);
    await t.stop();
  });

  it('aborts the model’s signal when its turn is released mid-generation', async () => {
    const model = mockModel(
      ({ signal }) =>
        new Promise((_, reject) =>
          signal?.addEventListener('abort', () => reject(signal.reason), { once: true }),
        ),
    );
    const t = createTestRuntime({ model, settleLimitMs: 50 });
    t.runtime.send({ type: 'avatar.summon', channel: room, avatarId: 'nova', by: { id: 'u1', name: 'Ada' } });
    await new Promise((r) => setImmediate(r));
    expect(model.calls).toHaveLength(1);
    expect(model.calls[0]?.signal?.aborted).toBe(false);
    await t.dismiss('nova');
    expect(model.calls[0]?.signal?.aborted).toBe(true);
    expect(t.transport.sent).toEqual([]);
    await t.stop();
  });

  it('plays a summon, a mention exchange and a thread to its natural end on simulated time', async () => {
    const t = createTestRuntime();
    await t.summon('nova');
    await t.summon('rex');
    await t.say('Nova, ask Rex about bread', { mentions: ['nova'] });
    await t.advance(30 * 60_000);
    const kinds = t.inspection
      .filter((e) => e.type === 'floor.effect')
      .map((e) => (e.type === 'floor.effect' ? e.effect.type : ''));
    expect(kinds).toContain('presence.summoned');
    expect(kinds).toContain('thread.opened');
    expect(kinds).toContain('thread.ended');
    expect(t.transport.sent.length).toBeGreaterThanOrEqual(2);
    expect(t.outcomes.every((o) => o.sent)).toBe(true);
    expect(t.runtime.view(room)?.inFlight ?? []).toEqual([]);
    await t.stop();
  });
});

describe('channel keys', () => {
  it('keeps channels apart whose kind and id would join to the same text (a:b + c, a + b:c)', async () => {
    const model = mockModel(({ channelKey }) => `answer in ${channelKey}`);
    const toFirst = new RecordingTransport({ kind: 'a:b' });
    const toSecond = new RecordingTransport({ kind: 'a' });
    const runtime = createRuntime({
      avatars: [{ id: 'nova', name: 'Nova' }],
      model,
      transports: [toFirst, toSecond],
      clock: new SimulatedClock(),
      logger: silentLogger(),
    });
    const first = { kind: 'a:b', id: 'c' };
    const second = { kind: 'a', id: 'b:c' };
    for (const [channel, who] of [
      [first, 'ann'],
      [second, 'bob'],
    ] as const) {
      runtime.send({ type: 'avatar.summon', channel, avatarId: 'nova', by: { id: who, name: who } });
      await runtime.whenIdle();
      runtime.send({
        type: 'channel.message',
        channel,
        messageId: `${who}-1`,
        author: { kind: 'human', id: who, name: who },
        text: `Nova, a secret from ${who}`,
      });
      await runtime.whenIdle();
    }
    expect(new Set(runtime.activeChannels()).size).toBe(2);
    // Each channel's prompt holds its own person's words only, and each answer went to its own id.
    const prompts = new Map(
      model.calls.map((call) => [call.channelKey, call.prompt.messages.map((m) => m.content).join('\n')]),
    );
    expect(prompts.size).toBe(2);
    const promptWith = (who: string) =>
      [...prompts.values()].find((p) => p.includes(`secret from ${who}`)) ?? '';
    expect(promptWith('ann')).not.toContain('secret from bob');
    expect(promptWith('bob')).not.toContain('secret from ann');
    const keyOf = (who: string) =>
      [...prompts.entries()].find(([, p]) => p.includes(`secret from ${who}`))?.[0];
    const sent = (t: RecordingTransport) => new Set(t.sent.map((m) => `${m.channelId} ${m.text}`));
    expect(sent(toFirst)).toEqual(new Set([`c answer in ${keyOf('ann')}`]));
    expect(sent(toSecond)).toEqual(new Set([`b:c answer in ${keyOf('bob')}`]));
    await runtime.stop();
  });
});

describe('channel keys round-trip', () => {
  it('gives back the channel a key was made from, separators in the kind included', async () => {
    const { channelFromKey, channelKey } = await import('../../src/actors/runtime.js');
    for (const channel of [
      { kind: 'discord', id: '123' },
      { kind: 'a:b', id: 'c' },
      { kind: 'a', id: 'b:c' },
      { kind: '50%:off', id: '%3A' },
      { kind: '%3A', id: 'x' },
    ])
      expect(channelFromKey(channelKey(channel))).toEqual(channel);
  });
});
