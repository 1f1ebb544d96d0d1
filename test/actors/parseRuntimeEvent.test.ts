import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseRuntimeEvent } from '../../src/actors/parseRuntimeEvent.js';
import { runtimeEventSchema } from '../../src/actors/runtimeEvents.js';
import { fuzzRuns } from '../support/fuzzRuns.js';

/** Mostly a valid value, sometimes an edge or an invalid one. */
const mostly = <T, U>(valid: fc.Arbitrary<T>, other: fc.Arbitrary<U>) =>
  fc.oneof({ arbitrary: valid, weight: 12 }, { arbitrary: other, weight: 1 });
const idLike = fc.constantFrom('room', 'Ada', 'm1', 'x'.repeat(200), 'Zoë 👋🏽', 'a b');
const notAnId = fc.oneof(
  fc.constantFrom('  padded  ', '', '   ', 'x'.repeat(201), ' '.repeat(3) + 'x'.repeat(200)),
  fc.string({ maxLength: 6 }),
  fc.constantFrom(undefined, null, 42, true, {}, []),
);
const anId = mostly(idLike, notAnId);
const maybe = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined, freq: 3 });

const message = fc.record(
  {
    type: mostly(fc.constant('channel.message'), fc.constantFrom('avatar.dismiss', 'nope', undefined)),
    at: maybe(mostly(fc.nat(), fc.constantFrom(-1, 1.5, Number.NaN, Number.MAX_SAFE_INTEGER + 2, '5'))),
    channel: mostly(fc.record({ kind: anId, id: anId }), fc.constantFrom(null, 'test:room', [])),
    messageId: anId,
    author: mostly(
      fc.oneof(
        fc.record({ kind: fc.constant('human'), id: anId, name: anId }),
        fc.record({ kind: fc.constant('avatar'), id: anId }),
      ),
      fc.oneof(fc.record({ kind: fc.constant('robot'), id: anId }), fc.constant(null)),
    ),
    text: mostly(fc.string({ maxLength: 20 }), fc.constantFrom('y'.repeat(20_001), 'z'.repeat(20_000), 7)),
    mentions: maybe(mostly(fc.array(anId, { maxLength: 3 }), fc.constantFrom(Array(101).fill('a'), 'a'))),
    replyTo: maybe(mostly(fc.record({ messageId: anId, avatarId: maybe(anId) }), fc.constant(5))),
    voice: maybe(mostly(fc.boolean(), fc.constant('yes'))),
    extra: maybe(fc.anything({ maxDepth: 1 })),
  },
  { requiredKeys: [] },
);

const summonOrDismiss = fc.record(
  {
    type: mostly(fc.constantFrom('avatar.summon', 'avatar.dismiss'), fc.constantFrom('channel.message', 'x')),
    at: maybe(mostly(fc.nat(), fc.constantFrom(-1, 1.5, Number.NaN, '5'))),
    channel: mostly(fc.record({ kind: anId, id: anId }), fc.constantFrom(null, 'test:room')),
    avatarId: anId,
    by: maybe(mostly(fc.record({ id: anId, name: anId }), fc.constantFrom(null, 'Ada'))),
    messageId: maybe(anId),
    extra: maybe(fc.anything({ maxDepth: 1 })),
  },
  { requiredKeys: [] },
);

const event = fc.oneof({ arbitrary: message, weight: 2 }, { arbitrary: summonOrDismiss, weight: 1 });

describe('parseRuntimeEvent', () => {
  it('gives exactly what the zod schema gives, for valid and invalid events alike', () => {
    fc.assert(
      fc.property(event, (input) => {
        const quick = parseRuntimeEvent(input);
        const zod = runtimeEventSchema.safeParse(input);
        expect(quick.success).toBe(zod.success);
        if (quick.success && zod.success) expect(quick.data).toStrictEqual(zod.data);
        if (!quick.success && !zod.success) expect(quick.error.issues).toEqual(zod.error.issues);
      }),
      { numRuns: fuzzRuns(3_000) },
    );
  });

  it('copies what it returns, so a caller changing its event later changes nothing inside', () => {
    const input = {
      type: 'channel.message',
      channel: { kind: 'test', id: 'room' },
      messageId: ' m1 ',
      author: { kind: 'human', id: 'u1', name: 'Ada' },
      text: 'hello',
      mentions: ['nova'],
    };
    const parsed = parseRuntimeEvent(input);
    if (!parsed.success) throw new Error('expected a valid event');
    input.channel.id = 'elsewhere';
    input.author.name = 'Eve';
    input.mentions.push('rex');
    expect(parsed.data).toMatchObject({
      messageId: 'm1',
      channel: { id: 'room' },
      author: { name: 'Ada' },
      mentions: ['nova'],
    });
  });
});
