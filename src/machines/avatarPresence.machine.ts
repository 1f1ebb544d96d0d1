import { assign, setup } from 'xstate';
import { type Attention, boostAttention } from './attention.js';
import type { Rung } from './rungOrder.js';

/** The timing knobs a presence needs; shared by every presence of a channel. */
export interface PresenceSettings {
  perAvatarCooldownMs: number;
  recentSummonCooldownMs: number;
  stickyAffinityTtlMs: number;
  attentionHalfLifeMs: number;
  summonConversationDurationMs: number;
}

/** What a presence is created with. */
export interface AvatarPresenceInput {
  channelId: string;
  avatarId: string;
  settings: PresenceSettings;
  at: number;
}

/** The claim a presence holds while one of its turns is in flight. */
export interface TurnClaimRef {
  turnId: string;
  rung: Rung;
  claimedAt: number;
}

/** A presence's data: flat and small, because idle presences are kept as data. */
export interface AvatarPresenceContext {
  channelId: string;
  avatarId: string;
  settings: PresenceSettings;
  now: number;
  /** Guaranteed turns left; granted on summon (or mention), spent only on delivery. */
  summonTurns: number;
  /** When guaranteed turns were last granted; the most recent grant wins the summon rung. */
  grantedAt: number | null;
  /** End of conversation mode (0 when never summoned). */
  conversingUntil: number;
  lastSpokeAt: number | null;
  /** Before this moment the ambient rungs skip the avatar. */
  cooldownUntil: number;
  attention: Attention;
  lastMentionAt: number | null;
  lastMentionBy: string | null;
  /** userId -> absolute expiry of that user's sticky affinity for this avatar. */
  affinity: Record<string, number>;
  claim: TurnClaimRef | null;
  /** Responses delivered in this channel. */
  delivered: number;
}

/** Events a presence understands. */
export type AvatarPresenceEvent =
  | { type: 'presence.summoned'; at: number; turns: number }
  | { type: 'presence.mentioned'; at: number; by: string; grantTurns: number }
  | { type: 'presence.addressedBy'; at: number; userId: string }
  | { type: 'presence.claim'; at: number; turnId: string; rung: Rung }
  | { type: 'presence.generated'; at: number; turnId: string }
  | { type: 'presence.delivered'; at: number; turnId: string }
  | { type: 'presence.failed'; at: number; turnId: string }
  | { type: 'presence.tick'; at: number }
  | { type: 'presence.dismissed'; at: number };

/** Rungs whose delivery spends one guaranteed summon turn, in conversation mode or not. */
const SPENDS_SUMMON_TURN: ReadonlySet<Rung> = new Set<Rung>(['summon', 'follow-up']);

/**
 * The guaranteed turns an avatar holds at `now`. Turns granted by a summon last as long as its
 * conversation mode (then ordinary rules apply); turns a mention granted afterwards, or
 * without a summon, last until spent.
 */
export function guaranteedTurns(context: AvatarPresenceContext, now: number): number {
  const conversationEnded = context.conversingUntil > 0 && now >= context.conversingUntil;
  if (conversationEnded && (context.grantedAt ?? 0) < context.conversingUntil) return 0;
  return context.summonTurns;
}

const sameTurn = (context: AvatarPresenceContext, event: AvatarPresenceEvent) =>
  'turnId' in event && context.claim?.turnId === event.turnId;

const presenceSetup = setup({
  types: {
    context: {} as AvatarPresenceContext,
    events: {} as AvatarPresenceEvent,
    input: {} as AvatarPresenceInput,
  },
  guards: {
    conversationOver: ({ context }) => context.now >= context.conversingUntil,
    isCurrentTurn: ({ context, event }) => sameTurn(context, event),
  },
  actions: {
    advanceClock: assign({ now: ({ context, event }) => Math.max(context.now, event.at) }),
    grantSummon: assign(({ context, event }) => {
      if (event.type !== 'presence.summoned') return {};
      return {
        summonTurns: Math.max(guaranteedTurns(context, event.at), event.turns),
        grantedAt: event.at,
        conversingUntil: Math.max(
          context.conversingUntil,
          event.at + context.settings.summonConversationDurationMs,
        ),
        attention: { value: 1, at: event.at },
      };
    }),
    noteMention: assign(({ context, event }) => {
      if (event.type !== 'presence.mentioned') return {};
      const held = guaranteedTurns(context, event.at);
      const grant = held === 0 && event.grantTurns > 0;
      return {
        lastMentionAt: event.at,
        lastMentionBy: event.by,
        summonTurns: grant ? event.grantTurns : held,
        grantedAt: grant ? event.at : context.grantedAt,
        attention: boostAttention(context.attention, event.at, context.settings.attentionHalfLifeMs, 0.5),
      };
    }),
    noteAffinity: assign(({ context, event }) => {
      if (event.type !== 'presence.addressedBy') return {};
      const affinity: Record<string, number> = {};
      for (const [user, until] of Object.entries(context.affinity))
        if (until > event.at) affinity[user] = until;
      affinity[event.userId] = event.at + context.settings.stickyAffinityTtlMs;
      return { affinity };
    }),
    takeClaim: assign(({ event }) => {
      if (event.type !== 'presence.claim') return {};
      return { claim: { turnId: event.turnId, rung: event.rung, claimedAt: event.at } };
    }),
    consumeTurn: assign(({ context, event }) => {
      const rung = context.claim?.rung;
      const conversing = event.at < context.conversingUntil;
      const held = guaranteedTurns(context, event.at);
      // While the summon conversation is live, every turn the avatar delivers (its greeting
      // aside) spends one of its guaranteed turns; outside it, only the rungs that used them.
      const spends =
        rung !== undefined &&
        held > 0 &&
        (SPENDS_SUMMON_TURN.has(rung) || (conversing && rung !== 'greeting'));
      const cooldown = conversing
        ? context.settings.recentSummonCooldownMs
        : context.settings.perAvatarCooldownMs;
      return {
        claim: null,
        summonTurns: spends ? held - 1 : held,
        lastSpokeAt: event.at,
        cooldownUntil: event.at + cooldown,
        delivered: context.delivered + 1,
        attention: boostAttention(context.attention, event.at, context.settings.attentionHalfLifeMs, 0.2),
      };
    }),
    releaseClaim: assign({ claim: () => null }),
  },
});

// A turn in flight settles the same way whether or not generation was reported.
const settleTurn = {
  'presence.delivered': { guard: 'isCurrentTurn', target: 'ready', actions: ['advanceClock', 'consumeTurn'] },
  'presence.failed': { guard: 'isCurrentTurn', target: 'ready', actions: ['advanceClock', 'releaseClaim'] },
} as const;

/**
 * One avatar's presence in one channel. Two parallel regions:
 * - `mode`: `ambient`, or `conversing` for a while after a summon (shorter cooldown, proactive);
 * - `turn`: `ready` → `claimed` → `generating` → back to `ready` on delivery (the turn is consumed
 *   and the cooldown starts) or on failure/abort (the claim is released, nothing is spent).
 * `dismissed` is final. Context also holds attention (decaying by elapsed time), the last mention
 * and sticky affinity per user with its TTL.
 */
export const avatarPresenceMachine = presenceSetup.createMachine({
  id: 'avatarPresence',
  context: ({ input }) => ({
    channelId: input.channelId,
    avatarId: input.avatarId,
    settings: input.settings,
    now: input.at,
    summonTurns: 0,
    grantedAt: null,
    conversingUntil: 0,
    lastSpokeAt: null,
    cooldownUntil: 0,
    // A newcomer is mildly attentive, so an unaddressed hello in a quiet room gets an answer.
    attention: { value: 0.25, at: input.at },
    lastMentionAt: null,
    lastMentionBy: null,
    affinity: {},
    claim: null,
    delivered: 0,
  }),
  initial: 'present',
  states: {
    present: {
      type: 'parallel',
      on: {
        'presence.tick': { actions: 'advanceClock' },
        'presence.mentioned': { actions: ['advanceClock', 'noteMention'] },
        'presence.addressedBy': { actions: ['advanceClock', 'noteAffinity'] },
        'presence.dismissed': { target: 'dismissed', actions: ['advanceClock', 'releaseClaim'] },
      },
      states: {
        mode: {
          initial: 'ambient',
          states: {
            ambient: {
              on: { 'presence.summoned': { target: 'conversing', actions: ['advanceClock', 'grantSummon'] } },
            },
            conversing: {
              always: { guard: 'conversationOver', target: 'ambient' },
              on: { 'presence.summoned': { actions: ['advanceClock', 'grantSummon'] } },
            },
          },
        },
        turn: {
          initial: 'ready',
          states: {
            ready: {
              on: { 'presence.claim': { target: 'claimed', actions: ['advanceClock', 'takeClaim'] } },
            },
            claimed: {
              on: {
                'presence.generated': {
                  guard: 'isCurrentTurn',
                  target: 'generating',
                  actions: 'advanceClock',
                },
                ...settleTurn,
              },
            },
            generating: { on: settleTurn },
          },
        },
      },
    },
    dismissed: { type: 'final' },
  },
});

/** True when `userId` has an unexpired sticky affinity for this presence at `now`. */
export function hasAffinity(context: AvatarPresenceContext, userId: string, now: number): boolean {
  const until = context.affinity[userId];
  return until !== undefined && until > now;
}
