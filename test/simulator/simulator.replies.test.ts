import { describe, expect, it } from 'vitest';
import type { AvatarProfile, TurnClaim } from '../../src/floor/floorTypes.js';
import { scriptedReply } from '../../src/simulator/index.js';

const luna: AvatarProfile = {
  id: 'luna',
  name: 'Luna',
  emoji: '🌙',
  persona: 'a dreamy astronomer who names every comet after a cat',
  topics: ['stars', 'comets'],
};

function claim(
  overrides: Omit<Partial<TurnClaim>, 'context'> & { context?: Partial<TurnClaim['context']> } = {},
): TurnClaim {
  const { context, ...rest } = overrides;
  return {
    turnId: 'general:t1',
    channelId: 'general',
    avatarId: 'luna',
    kind: 'response',
    rung: 'mention',
    reason: 'test',
    lane: 'cascade',
    anchorMessageId: 'm1',
    claimedAt: 0,
    ...rest,
    context: { presentNames: [], threadPartnerNames: [], closing: false, ...context },
  };
}

const reply = (turn: TurnClaim, spokenInThread = 0, greetingMaxChars = 150) =>
  scriptedReply({
    turn,
    avatar: luna,
    isAvatar: (id) => ['luna', 'rex', 'pip'].includes(id),
    greetingMaxChars,
    spokenInThread,
    avatarNames: ['Luna', 'Rex', 'Pip'],
  });

describe('scripted offline replies', () => {
  it('are deterministic per avatar and turn, and vary between turns', () => {
    const a = reply(claim({ turnId: 'general:t1' }));
    expect(reply(claim({ turnId: 'general:t1' }))).toEqual(a);
    const texts = new Set(
      Array.from({ length: 20 }, (_, i) => reply(claim({ turnId: `general:t${i}` })).text),
    );
    expect(texts.size).toBeGreaterThan(5);
  });

  it('keep greetings within greetingMaxChars, flavoured by persona or topics', () => {
    for (let i = 0; i < 30; i++) {
      const g = reply(claim({ kind: 'greeting', rung: 'greeting', turnId: `general:t${i}` }), 0, 60);
      expect(g.text.length).toBeLessThanOrEqual(60);
      expect(g.mentions).toEqual([]);
    }
    const texts = Array.from(
      { length: 30 },
      (_, i) => reply(claim({ kind: 'greeting', turnId: `g${i}` })).text,
    );
    expect(texts.some((t) => /astronomer|stars|comets/.test(t))).toBe(true);
  });

  it('answer a call instead of arriving when the avatar was already present', () => {
    for (let i = 0; i < 30; i++) {
      const g = reply(
        claim({
          kind: 'greeting',
          rung: 'greeting',
          turnId: `general:t${i}`,
          context: { alreadyPresent: true, addressedByName: 'Sam' },
        }),
      );
      expect(g.text).toContain('Sam');
      expect(g.text).not.toMatch(/summoned at last|has arrived|dropping by|reporting for duty/i);
    }
  });

  it('a second follow-up answers whoever reacted to the avatar', () => {
    const r = reply(claim({ kind: 'follow-up', rung: 'follow-up', context: { addressedByName: 'Bob' } }));
    expect(r.text.startsWith('Bob, ')).toBe(true);
    expect(r.mentions).toEqual([]);
  });

  it('follow-ups name the avatars present; with none, they invite talk without saying the room is empty (people may be there)', () => {
    const f = reply(
      claim({ kind: 'follow-up', rung: 'follow-up', context: { presentNames: ['Rex', 'Pip'] } }),
    );
    expect(f.text).toMatch(/^Oh, Rex and Pip are here!/);
    for (let i = 0; i < 12; i++) {
      const alone = reply(claim({ kind: 'follow-up', rung: 'follow-up', turnId: `t${i}` }));
      expect(alone.text).not.toMatch(/looks around|nobody|quiet in here|hello\?/iu);
      expect(alone.text).toMatch(/talk|anyone for/iu);
    }
    const crowd = reply(claim({ kind: 'follow-up', context: { presentNames: ['A', 'B', 'C', 'D', 'E'] } }));
    expect(crowd.text).toMatch(/^Oh, A, B, C and 2 more are here!/);
  });

  it('answer an avatar by name and mention it back, so the conversation continues', () => {
    const r = reply(
      claim({
        threadId: 'th1',
        context: { addressedById: 'rex', addressedByName: 'Rex', threadTurn: 1, threadMaxTurns: 6 },
      }),
    );
    expect(r.text).toMatch(/^Rex, /);
    expect(r.mentions).toEqual(['rex']);
    expect(r.farewell).toBe(false);
  });

  it('answer people by name without mentioning any avatar', () => {
    const r = reply(
      claim({
        lane: 'main',
        context: { addressedById: 'sam', addressedByName: 'Sam', triggerText: 'hi Luna?' },
      }),
    );
    expect(r.text).toMatch(/^Sam, /);
    expect(r.mentions).toEqual([]);
  });

  it('say goodbye, naming nobody, near the thread limit, when closing, or after speaking twice', () => {
    const context = { addressedById: 'rex', addressedByName: 'Rex', threadTurn: 2, threadMaxTurns: 6 };
    const cases = [
      reply(claim({ threadId: 'th1', context: { ...context, threadTurn: 5 } })),
      reply(claim({ threadId: 'th1', context: { ...context, closing: true } })),
      reply(claim({ threadId: 'th1', context }), 2),
    ];
    for (const r of cases) {
      expect(r.farewell).toBe(true);
      expect(r.mentions).toEqual([]);
      expect(r.text).toMatch(/goodbye|bye|see you|gotta go/i);
      expect(r.text).not.toMatch(/Rex|Luna|Pip/);
    }
  });

  it('never name or decorate themselves, and never echo another avatar name by accident', () => {
    for (let i = 0; i < 50; i++) {
      for (const kind of ['greeting', 'follow-up', 'response'] as const) {
        const r = reply(
          claim({
            kind,
            turnId: `t${i}`,
            context: {
              triggerText: 'Pippa and Rex talked about Luna tonight',
              addressedById: 'sam',
              addressedByName: 'Sam',
            },
          }),
        );
        expect(r.text).not.toMatch(/Luna|🌙|\bRex\b/);
      }
    }
  });
});
