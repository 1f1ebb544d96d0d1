/**
 * Fuzzing `runtime.send` and `runtime.connect`, where a program hands Troupe whatever it received:
 * anything at all, objects that fight being read (throwing getters, Proxies whose traps throw,
 * getters that throw Proxies), deeply nested, huge and cyclic objects, text with control
 * characters. Whatever comes, send() returns (never throws), a refusal is TROUPE_EVENT_INVALID
 * (or TROUPE_AVATAR_UNKNOWN for a well-formed summon of nobody), a valid event is accepted, a
 * connected stream keeps flowing, and a person is still answered afterwards. A real logger writes
 * every refusal, so logging a hostile value is fuzzed too. `FUZZ_RUNS=5000` runs thousands.
 */
import { Writable } from 'node:stream';
import fc from 'fast-check';
import { Subject } from 'rxjs';
import { afterAll, describe, expect, it } from 'vitest';
import { runtimeEventSchema } from '../../src/actors/runtimeEvents.js';
import { createLogger } from '../../src/logging/logger.js';
import { createTestRuntime } from '../../src/testing/index.js';
import { fuzzRuns } from '../support/fuzzRuns.js';
import {
  getterThrowing,
  revokedProxy,
  throwingProxy,
  unreadableThrowables,
} from '../support/hostileValues.js';

/** Text that breaks parsers and terminals: controls, escapes, lone surrogates, blank, huge. */
const nasty = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ unit: fc.integer({ min: 0, max: 0x9f }).map((c) => String.fromCharCode(c)), maxLength: 20 }),
  fc.constantFrom(
    '',
    '   ',
    '\u001b[2J',
    '\u001b]0;pwned\u0007',
    '\u009b31m',
    '\r\nforged line',
    '\ud800',
    '\u202e',
    '\u0000',
    'x'.repeat(201),
    '__proto__',
    'constructor',
  ),
);

const room = { kind: 'test', id: 'room' };
const human = { kind: 'human', id: 'u1', name: 'Ada' };

/** A valid event: the runtime must accept it (ids trimmed to 1-200 characters, text up to 20,000). */
const idText = fc
  .string({ unit: 'binary', minLength: 1, maxLength: 40 })
  .filter((s) => s.trim().length >= 1 && s.trim().length <= 200);
const validEvents = fc.oneof(
  fc.record(
    {
      type: fc.constant('channel.message'),
      channel: fc.oneof(fc.constant(room), fc.record({ kind: idText, id: idText })),
      messageId: idText,
      author: fc.oneof(
        fc.record({
          kind: fc.constant('human'),
          id: idText,
          name: idText.filter((s) => s.trim().length <= 100),
        }),
        fc.record({ kind: fc.constant('avatar'), id: idText }),
      ),
      text: fc.oneof(nasty, fc.string({ unit: 'binary', maxLength: 300 })),
      mentions: fc.array(idText, { maxLength: 3 }),
      replyTo: fc.record({ messageId: idText }),
      voice: fc.boolean(),
    },
    { requiredKeys: ['type', 'channel', 'messageId', 'author', 'text'] },
  ),
  fc.record({
    type: fc.constantFrom('avatar.summon', 'avatar.dismiss'),
    channel: fc.constant(room),
    avatarId: fc.constantFrom('nova', 'rex', ' rex '),
    by: fc.constant({ id: 'u1', name: 'Ada' }),
  }),
);

/** Events that look almost right: the real shape with fuzzed fields. */
const nearlyEvents = fc.record(
  {
    type: fc.constantFrom('channel.message', 'avatar.summon', 'avatar.dismiss', 'response.send', 'nonsense'),
    at: fc.oneof(fc.nat(), fc.constantFrom(-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53, '5')),
    channel: fc.oneof(fc.record({ kind: nasty, id: nasty }), nasty, fc.constant(room)),
    messageId: fc.oneof(nasty, fc.integer()),
    author: fc.oneof(
      fc.record({ kind: fc.constantFrom('human', 'avatar', 'bot'), id: nasty, name: nasty }),
      nasty,
    ),
    text: fc.oneof(nasty, fc.string({ maxLength: 2000 })),
    avatarId: fc.oneof(fc.constantFrom('nova', 'rex', 'nobody'), nasty),
    by: fc.oneof(fc.record({ id: nasty, name: nasty }), nasty),
    mentions: fc.oneof(fc.array(nasty, { maxLength: 3 }), nasty),
    response: fc.oneof(
      fc.record(
        {
          idempotencyKey: nasty,
          channel: fc.oneof(fc.constant(room), fc.record({ kind: nasty, id: nasty })),
          text: nasty,
          origin: fc.record({ kind: fc.constantFrom('answer', 'notice', 'nope') }),
          preparedAt: fc.oneof(fc.nat(), fc.constant(Number.NaN)),
        },
        { requiredKeys: [] },
      ),
      nasty,
    ),
  },
  { requiredKeys: ['type'] },
);

/** A value whose shape is a large or deep one: made inside the property (cheap to shrink). */
const structural = fc.constantFrom<readonly [string, () => unknown]>(
  [
    'cyclic',
    () => {
      const cyclic: Record<string, unknown> = { type: 'channel.message', author: human, text: 'hi' };
      cyclic.channel = cyclic;
      cyclic.replyTo = cyclic;
      return cyclic;
    },
  ],
  [
    'nested 100,000 deep',
    () => {
      let deep: Record<string, unknown> = { type: 'channel.message' };
      for (let i = 0; i < 100_000; i++)
        deep = { type: 'channel.message', channel: deep, author: deep, replyTo: deep };
      return deep;
    },
  ],
  ['a million mentions', () => ({ ...valid('big'), mentions: new Array(1_000_000).fill('nova') })],
  ['text of five million characters', () => ({ ...valid('big'), text: 'x'.repeat(5_000_000) })],
  [
    'a hundred thousand keys',
    () =>
      Object.assign(
        valid('keys'),
        Object.fromEntries(Array.from({ length: 100_000 }, (_, i) => [`k${i}`, i])),
      ),
  ],
  ['an array event', () => Object.assign([], valid('array'))],
);

function valid(messageId: string): Record<string, unknown> {
  return { type: 'channel.message', channel: room, messageId, author: human, text: 'hello' };
}

/**
 * Objects that fight being read, as makers (fast-check trips over a Proxy when recording it):
 * a field whose getter throws an ordinary or unreadable value, Proxies with one throwing trap,
 * a revoked Proxy, a `type` nobody can read, and a valid event carrying a hostile extra field.
 */
const hostile = fc.oneof(
  fc
    .tuple(
      fc.constantFrom('type', 'channel', 'messageId', 'author', 'text', 'mentions', 'replyTo', 'at'),
      fc.constantFrom(...unreadableThrowables.map(([, make]) => make), () => new Error('getter')),
    )
    .map(([key, thrown]) => ['getter', () => getterThrowing(valid('g'), key, thrown)] as const),
  fc.constantFrom('get', 'has', 'ownKeys', 'getOwnPropertyDescriptor', 'getPrototypeOf').map(
    (trap) =>
      [
        `trap ${trap}`,
        () =>
          new Proxy(valid('p'), {
            [trap]: () => {
              throw throwingProxy();
            },
          }),
      ] as const,
  ),
  fc.constant(['revoked', revokedProxy] as const),
  fc.constant(['unreadable type', () => ({ ...valid('t'), type: throwingProxy() })] as const),
  fc.constant(['unreadable channel', () => ({ ...valid('c'), channel: revokedProxy() })] as const),
  structural,
);

/**
 * Hostile values that can still read as a valid event: a Proxy whose only throwing trap is one
 * reading an event does not use, and a valid event with many extra keys (dropped). Every other
 * hostile value must be refused.
 */
const mayBeTaken = (label: string): boolean =>
  label.startsWith('trap ') || label === 'a hundred thousand keys';

type Sent =
  | { kind: 'plain'; value: unknown }
  | { kind: 'valid'; value: unknown }
  | { kind: 'hostile'; label: string; make: () => unknown };

const anyInput: fc.Arbitrary<Sent> = fc.oneof(
  fc.anything().map((value) => ({ kind: 'plain', value }) as const),
  nearlyEvents.map((value) => ({ kind: 'plain', value }) as const),
  validEvents.map((value) => ({ kind: 'valid', value }) as const),
  hostile.map(([label, make]) => ({ kind: 'hostile', label, make }) as const),
);

describe('runtime.send and runtime.connect (fuzzed)', () => {
  let logged = 0;
  const t = createTestRuntime({
    retain: 50,
    logger: createLogger({
      level: 'debug',
      destination: new Writable({
        write(_chunk, _encoding, done) {
          logged++;
          done();
        },
      }),
    }),
    avatars: [
      { id: 'nova', name: 'Nova', residentIn: ['test:room'] },
      { id: 'rex', name: 'Rex' },
    ],
  });
  afterAll(async () => {
    await t.stop();
  });

  /** After the fuzz: a person writing to Nova is still answered. */
  async function stillAnswers(messageId: string): Promise<void> {
    // Nova summoned back, in case the fuzz dismissed her (a dismissed resident is rightly silent).
    await t.advance(10 * 60_000);
    const answered: string[] = [];
    const watch = t.runtime.outcomes$.subscribe((o) => {
      if (o.sent && o.origin.triggerMessageId !== undefined) answered.push(o.origin.triggerMessageId);
    });
    await t.summon('nova');
    await t.say('Nova, are you still with us?', { messageId });
    await t.advance(60_000);
    watch.unsubscribe();
    expect(answered).toContain(messageId);
  }

  it('send() never throws: a valid event is accepted, anything else refused with a typed error, as the schema says', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(anyInput, { maxLength: 5 }), async (inputs) => {
        for (const input of inputs) {
          const value = input.kind === 'hostile' ? input.make() : input.value;
          const result = t.runtime.send(value as never);
          if (input.kind === 'valid') {
            expect(result).toEqual({ accepted: true });
            continue;
          }
          if (input.kind === 'hostile' && !mayBeTaken(input.label))
            expect(result.accepted, input.label).toBe(false);
          if (!result.accepted)
            expect(
              ['TROUPE_EVENT_INVALID', 'TROUPE_AVATAR_UNKNOWN'],
              input.kind === 'hostile' ? input.label : '',
            ).toContain(result.error.code);
          // A plain value is accepted exactly when the event schema takes it.
          if (input.kind === 'plain') {
            const schemaSays = runtimeEventSchema.safeParse(value).success;
            expect(result.accepted || result.error.code === 'TROUPE_AVATAR_UNKNOWN').toBe(schemaSays);
          }
        }
        await t.settle();
      }),
      { numRuns: fuzzRuns(150) },
    );
    expect(logged).toBeGreaterThan(0);
    await stillAnswers('after-send-fuzz');
  });

  it('connect() refuses each bad value as send() would, keeps the stream open, and a person is still answered', async () => {
    const events$ = new Subject<unknown>();
    const subscription = t.runtime.connect(events$);
    const refused: string[] = [];
    // Only refusals: an accepted response.send to a kind with no transport fails later, on errors$ too.
    const watch = t.runtime.errors$.subscribe((error) => {
      if (error.code === 'TROUPE_EVENT_INVALID') refused.push(error.code);
    });
    fc.assert(
      fc.property(anyInput, (input) => {
        const value = input.kind === 'hostile' ? input.make() : input.value;
        refused.length = 0;
        events$.next(value);
        expect(subscription.closed).toBe(false);
        // One refusal for each value send() refuses, none for a valid event.
        if (input.kind === 'valid') expect(refused).toEqual([]);
        else if (input.kind === 'hostile')
          expect(refused).toEqual(
            mayBeTaken(input.label) && refused.length === 0 ? [] : ['TROUPE_EVENT_INVALID'],
          );
        else if (!runtimeEventSchema.safeParse(value).success)
          expect(refused).toEqual(['TROUPE_EVENT_INVALID']);
        else expect(refused).toEqual([]);
      }),
      { numRuns: fuzzRuns(150) },
    );
    watch.unsubscribe();
    await t.settle();
    subscription.unsubscribe();
    await stillAnswers('after-connect-fuzz');
  });
});
