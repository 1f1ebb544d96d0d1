/**
 * Avatars know only what they witnessed: over random arrivals, dismissals, messages and restarts,
 * no prompt ever shows an avatar a message said while it was away, beyond the few said just
 * before each arrival (TROUPE_WITNESS_BACKFILL).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createMemoryStore } from '../../src/adapters/store/memory/memoryStore.js';
import type { TurnGenerationRequest } from '../../src/ports/model.js';
import { createTestRuntime, mockModel } from '../../src/testing/index.js';

const avatars = [
  { id: 'nova', name: 'Nova', residentIn: ['test:room'] },
  { id: 'rex', name: 'Rex' },
  { id: 'iris', name: 'Iris' },
];
const visitors = ['rex', 'iris'] as const;

type Step =
  | { kind: 'say'; to: string | undefined; waitMs: number }
  | { kind: 'summon' | 'dismiss'; avatarId: (typeof visitors)[number]; waitMs: number }
  | { kind: 'restart' };

/** What happened, in order: messages (by token), stays, and each prompt with the tokens it held. */
type Happening =
  | { type: 'message'; token: string; authorId: string }
  | { type: 'arrive' | 'leave'; avatarId: string }
  | { type: 'prompt'; avatarId: string; tokens: string[] };

const tokenPattern = /«[mr]\d+»/g;

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant('say' as const),
      to: fc.constantFrom(undefined, 'Nova', 'Rex', 'Iris'),
      waitMs: fc.integer({ min: 1, max: 90_000 }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constantFrom('summon' as const, 'dismiss' as const),
      avatarId: fc.constantFrom(...visitors),
      waitMs: fc.integer({ min: 1, max: 90_000 }),
    }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: 'restart' as const }) },
);

/** The tokens an avatar may know at the end of `before`: its own, witnessed, or told at arrival. */
function allowedTokens(before: readonly Happening[], avatarId: string, backfill: number): Set<string> {
  const allowed = new Set<string>();
  const said: string[] = [];
  let present = false;
  for (const h of before) {
    if (h.type === 'arrive' && h.avatarId === avatarId && !present) {
      present = true;
      for (const token of backfill > 0 ? said.slice(-backfill) : []) allowed.add(token);
    } else if (h.type === 'leave' && h.avatarId === avatarId) present = false;
    else if (h.type === 'message') {
      said.push(h.token);
      if (present || h.authorId === avatarId) allowed.add(h.token);
    }
  }
  return allowed;
}

async function play(steps: readonly Step[], backfill: number): Promise<Happening[]> {
  const store = createMemoryStore({ historyPerChannel: 1_000 });
  const happened: Happening[] = [{ type: 'arrive', avatarId: 'nova' }];
  let replies = 0;
  const model = mockModel((request: TurnGenerationRequest) => {
    const shown = request.prompt.messages.map((m) => m.content).join('\n');
    happened.push({ type: 'prompt', avatarId: request.avatar.id, tokens: shown.match(tokenPattern) ?? [] });
    const token = `«r${++replies}»`;
    happened.push({ type: 'message', token, authorId: request.avatar.id });
    return `${token} noted`;
  });
  const start = (startAt?: number) => {
    const t = createTestRuntime({
      avatars,
      store,
      model,
      config: { witnessBackfill: backfill },
      ...(startAt !== undefined ? { startAt } : {}),
    });
    t.runtime.inspection$.subscribe((e) => {
      if (e.type !== 'floor.effect') return;
      if (e.effect.type === 'presence.summoned')
        happened.push({ type: 'arrive', avatarId: e.effect.avatarId });
      if (e.effect.type === 'presence.dismissed')
        happened.push({ type: 'leave', avatarId: e.effect.avatarId });
    });
    return t;
  };
  let t = start();
  let said = 0;
  for (const step of steps) {
    if (step.kind === 'restart') {
      await t.stop();
      t = start(t.clock.now() + 1);
      continue;
    }
    await t.advance(step.waitMs);
    if (step.kind === 'say') {
      const token = `«m${++said}»`;
      happened.push({ type: 'message', token, authorId: 'u1' });
      // Ids unique across restarts (a repeated id is a redelivery, which the channel drops).
      await t.say(step.to ? `${step.to}, ${token}?` : `${token} anyone?`, { messageId: `m${said}` });
    } else if (step.kind === 'summon') await t.summon(step.avatarId);
    else await t.dismiss(step.avatarId);
  }
  await t.stop();
  return happened;
}

describe('avatars know only what they witnessed', () => {
  it('no prompt holds a message from outside the avatar’s stays plus the backfill, across restarts', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(stepArb, { minLength: 1, maxLength: 25 }),
        fc.integer({ min: 0, max: 3 }),
        async (steps, backfill) => {
          const happened = await play(steps, backfill);
          happened.forEach((h, i) => {
            if (h.type !== 'prompt') return;
            const allowed = allowedTokens(happened.slice(0, i), h.avatarId, backfill);
            expect(h.tokens.filter((token) => !allowed.has(token))).toEqual([]);
          });
        },
      ),
      { numRuns: 40 },
    );
  });

  it('a dismissed avatar that returns knows the backfill of what was said while it was away, no more', async () => {
    const happened = await play(
      [
        { kind: 'summon', avatarId: 'rex', waitMs: 1 },
        { kind: 'say', to: 'Rex', waitMs: 1_000 },
        { kind: 'dismiss', avatarId: 'rex', waitMs: 1_000 },
        { kind: 'say', to: undefined, waitMs: 1_000 },
        { kind: 'say', to: undefined, waitMs: 1_000 },
        { kind: 'restart' },
        { kind: 'say', to: undefined, waitMs: 1_000 },
        { kind: 'summon', avatarId: 'rex', waitMs: 1_000 },
      ],
      1,
    );
    const rexPrompts = happened.filter((h) => h.type === 'prompt' && h.avatarId === 'rex');
    const last = rexPrompts.at(-1);
    // What Rex heard before leaving (m1), its own lines, and the one message said just before its return.
    expect(last?.type === 'prompt' && last.tokens).toContain('«m1»');
    expect(last?.type === 'prompt' && last.tokens).toContain('«m4»');
    expect(last?.type === 'prompt' && last.tokens).not.toContain('«m2»');
    expect(last?.type === 'prompt' && last.tokens).not.toContain('«m3»');
  });
});

describe('how many messages a turn saw', () => {
  it('turn.generated says how many channel messages the prompt showed the avatar', async () => {
    const t = createTestRuntime({
      avatars,
      model: mockModel(() => 'hello'),
      config: { witnessBackfill: 1, summonProactiveEnabled: false },
    });
    await t.say('first');
    await t.advance(1_000);
    await t.say('second');
    await t.advance(1_000);
    await t.summon('rex');
    const greeting = t.inspection.findLast((e) => e.type === 'turn.generated' && e.avatarId === 'rex');
    // The one message said just before Rex arrived (the backfill), nothing older.
    expect(greeting).toMatchObject({ type: 'turn.generated', seen: 1 });
    await t.stop();
  });
});
