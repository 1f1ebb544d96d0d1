import { assign, setup } from 'xstate';
import { type OfferedChoice, resolveChoiceReply } from '../textRules/choiceReply.js';

/** What a pending choice is about: who was asked, what to re-run, and until when. */
export interface PendingChoiceContext {
  channelId: string;
  userId: string;
  /** The tool query that produced the options (re-run by id once one is picked). */
  entityType: string;
  choices: OfferedChoice[];
  /** Absolute deadline: after it, a reply is no longer read as a choice. */
  expiresAt: number;
  now: number;
  picked: OfferedChoice | null;
}

/** What a pending choice starts with. */
export interface PendingChoiceInput {
  channelId: string;
  userId: string;
  entityType: string;
  choices: OfferedChoice[];
  at: number;
  ttlMs: number;
}

/** Events of a pending choice. */
export type PendingChoiceEvent =
  | { type: 'choice.reply'; at: number; text: string }
  | { type: 'choice.tick'; at: number };

/**
 * A disambiguation waiting for the person's pick (taken further): one per channel and
 * user. A reply that names an option — "2", "the second one", or the exact name — resolves it
 * (`picked`); anything else, or the deadline passing, clears it. Pure: time comes from events.
 */
export const pendingChoiceMachine = setup({
  types: {
    context: {} as PendingChoiceContext,
    input: {} as PendingChoiceInput,
    events: {} as PendingChoiceEvent,
  },
  guards: {
    expired: ({ context, event }) => event.at >= context.expiresAt,
    picksOne: ({ context, event }) =>
      event.type === 'choice.reply' && resolveChoiceReply(event.text, context.choices) !== undefined,
  },
}).createMachine({
  id: 'pendingChoice',
  context: ({ input }) => ({
    channelId: input.channelId,
    userId: input.userId,
    entityType: input.entityType,
    choices: input.choices,
    expiresAt: input.at + input.ttlMs,
    now: input.at,
    picked: null,
  }),
  initial: 'awaiting',
  states: {
    awaiting: {
      on: {
        'choice.reply': [
          { guard: 'expired', target: 'expired', actions: assign({ now: ({ event }) => event.at }) },
          {
            guard: 'picksOne',
            target: 'resolved',
            actions: assign({
              now: ({ event }) => event.at,
              picked: ({ context, event }) => resolveChoiceReply(event.text, context.choices) ?? null,
            }),
          },
          { target: 'cleared', actions: assign({ now: ({ event }) => event.at }) },
        ],
        'choice.tick': {
          guard: 'expired',
          target: 'expired',
          actions: assign({ now: ({ event }) => event.at }),
        },
      },
    },
    resolved: { type: 'final' },
    cleared: { type: 'final' },
    expired: { type: 'final' },
  },
});
