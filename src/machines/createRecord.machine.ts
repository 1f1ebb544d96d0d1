import { assign, setup } from 'xstate';

/** A record being created in a conversation: what it will hold, and what is still to be asked. */
export interface CreateRecordContext {
  entityType: string;
  /** Column → value, as the person gave them. */
  values: Record<string, string>;
  /** Required columns not given yet, asked one at a time in this order. */
  missing: string[];
  /** Absolute deadline: after it, a reply no longer belongs to this flow. */
  expiresAt: number;
  now: number;
}

/** What a create flow starts with: the values already known (the name) and the required columns. */
export interface CreateRecordInput {
  entityType: string;
  values: Record<string, string>;
  required: readonly string[];
  at: number;
  ttlMs: number;
}

/** Events of a create flow. Replies arrive already read (yes, no, a correction, an answer). */
export type CreateRecordEvent =
  | { type: 'create.answer'; at: number; text: string }
  | { type: 'create.correct'; at: number; column: string; value: string }
  | { type: 'create.confirm'; at: number }
  | { type: 'create.cancel'; at: number }
  | { type: 'create.inserted'; at: number }
  | { type: 'create.failed'; at: number }
  | { type: 'create.tick'; at: number };

const expiry = { guard: 'expired', target: 'expired', actions: 'stamp' } as const;

/**
 * One "create vendor Acme" flow, per channel and person: the required fields are asked for one at
 * a time (`asking`), the row is shown and waits for yes, no or a correction (`confirming`), then
 * the insert runs (`inserting`) and ends `created` or `failed`. No, or the deadline passing, ends
 * it without an insert. Pure: time comes from events; the caller does the insert.
 */
export const createRecordMachine = setup({
  types: {
    context: {} as CreateRecordContext,
    input: {} as CreateRecordInput,
    events: {} as CreateRecordEvent,
  },
  actions: {
    stamp: assign({ now: ({ event }) => event.at }),
  },
  guards: {
    expired: ({ context, event }) => event.at >= context.expiresAt,
    complete: ({ context }) => context.missing.length === 0,
    blankAnswer: ({ event }) => event.type === 'create.answer' && event.text.trim() === '',
  },
}).createMachine({
  id: 'createRecord',
  context: ({ input }) => ({
    entityType: input.entityType,
    values: { ...input.values },
    missing: input.required.filter((column) => input.values[column] === undefined),
    expiresAt: input.at + input.ttlMs,
    now: input.at,
  }),
  initial: 'asking',
  states: {
    asking: {
      // Checked after every transition, targetless ones too: the last field answered moves on.
      always: { guard: 'complete', target: 'confirming' },
      on: {
        'create.answer': [
          expiry,
          { guard: 'blankAnswer', actions: 'stamp' },
          {
            actions: assign({
              now: ({ event }) => event.at,
              values: ({ context, event }) => {
                const column = context.missing[0];
                return column === undefined
                  ? context.values
                  : { ...context.values, [column]: event.text.trim() };
              },
              missing: ({ context }) => context.missing.slice(1),
            }),
          },
        ],
        'create.correct': [
          expiry,
          {
            actions: assign({
              now: ({ event }) => event.at,
              values: ({ context, event }) => ({ ...context.values, [event.column]: event.value }),
              missing: ({ context, event }) => context.missing.filter((c) => c !== event.column),
            }),
          },
        ],
        'create.cancel': { target: 'cancelled', actions: 'stamp' },
        'create.tick': expiry,
      },
    },
    confirming: {
      on: {
        'create.confirm': [expiry, { target: 'inserting', actions: 'stamp' }],
        'create.correct': [
          expiry,
          {
            actions: assign({
              now: ({ event }) => event.at,
              values: ({ context, event }) => ({ ...context.values, [event.column]: event.value }),
            }),
          },
        ],
        'create.cancel': { target: 'cancelled', actions: 'stamp' },
        'create.tick': expiry,
      },
    },
    inserting: {
      on: {
        'create.inserted': { target: 'created', actions: 'stamp' },
        'create.failed': { target: 'failed', actions: 'stamp' },
      },
    },
    created: { type: 'final' },
    failed: { type: 'final' },
    cancelled: { type: 'final' },
    expired: { type: 'final' },
  },
});
