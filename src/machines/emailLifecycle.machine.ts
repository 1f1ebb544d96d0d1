import { assign, setup } from 'xstate';

/** How an email was handled, once it is done. */
export type EmailOutcome = 'ignored' | 'notified' | 'answered' | 'invalid' | 'failed';

/** One email's lifecycle data: plain JSON, persisted after every step. */
export interface EmailLifecycleContext {
  emailId: string;
  /** Time of the last event (ms). */
  now: number;
  classification: 'ignore' | 'notify' | 'respond' | null;
  reasoning: string | null;
  /** The action waiting for the human (`Email Assistant: notify`, `send_email_tool`, ...), if any. */
  pending: string | null;
  /** The human's feedback for the response agent, oldest first. */
  feedback: string[];
  triageAttempts: number;
  maxTriageAttempts: number;
  /** Failed tries of the agent's current step (a model call or a tool call), reset when one works. */
  agentAttempts: number;
  maxAgentAttempts: number;
  /** Tool calls carried out (after review where they needed one). */
  toolCalls: number;
  outcome: EmailOutcome | null;
  /** Why the email failed, or why the step it waits to try again failed last. */
  error: { code: string; message: string } | null;
}

/** What an email's lifecycle starts with. */
export interface EmailLifecycleInput {
  emailId: string;
  at: number;
  /** Triage attempts before a retryable failure ends the email as failed (default 3). */
  maxTriageAttempts?: number;
  /** Tries of one agent step before a retryable failure ends the email as failed (default 3). */
  maxAgentAttempts?: number;
}

type Failure = { code: string; message: string };

/** Events of an email's lifecycle; the runtime does the work and reports it with these. */
export type EmailLifecycleEvent =
  | { type: 'email.parsed'; at: number }
  | { type: 'email.invalid'; at: number; error: Failure }
  | { type: 'triage.decided'; at: number; classification: 'ignore' | 'notify' | 'respond'; reasoning: string }
  | { type: 'triage.failed'; at: number; error: Failure; retryable: boolean }
  | {
      type: 'human.answered';
      at: number;
      answer: 'accept' | 'edit' | 'response' | 'ignore';
      feedback?: string;
    }
  | { type: 'agent.proposed'; at: number; action: string; review: boolean }
  | { type: 'tool.completed'; at: number }
  | { type: 'agent.done'; at: number }
  | { type: 'agent.failed'; at: number; error: Failure; retryable: boolean }
  | { type: 'email.closed'; at: number }
  | { type: 'email.close-failed'; at: number; error: Failure };

/**
 * One email, from arrival to done (as a statechart): parsed, triaged, then ignored,
 * notifying the human (who responds with feedback or ignores it), or responding — the response
 * agent's tool loop, where each consequential call (sending an email, scheduling a meeting, a
 * question) waits for the human's review: accept or edit carry it out, feedback sends the agent
 * back to drafting, ignore ends the email. Every path closes the email (labelled by the runtime;
 * marked read only when a person saw it) before it is done. Pure: the runtime does each step's work and reports it as an
 * event, and persists the snapshot after each one, so a restart resumes where the email was.
 */
export const emailLifecycleMachine = setup({
  types: {
    context: {} as EmailLifecycleContext,
    input: {} as EmailLifecycleInput,
    events: {} as EmailLifecycleEvent,
  },
  guards: {
    classifiedIgnore: ({ context }) => context.classification === 'ignore',
    classifiedNotify: ({ context }) => context.classification === 'notify',
    mayRetryTriage: ({ context, event }) =>
      event.type === 'triage.failed' &&
      event.retryable &&
      context.triageAttempts + 1 < context.maxTriageAttempts,
    mayRetryAgent: ({ context, event }) =>
      event.type === 'agent.failed' &&
      event.retryable &&
      (context.agentAttempts ?? 0) + 1 < (context.maxAgentAttempts ?? 3),
    answeredRespond: ({ event }) => event.type === 'human.answered' && event.answer === 'response',
    answeredIgnore: ({ event }) => event.type === 'human.answered' && event.answer === 'ignore',
    answeredAcceptOrEdit: ({ event }) =>
      event.type === 'human.answered' && (event.answer === 'accept' || event.answer === 'edit'),
    needsReview: ({ event }) => event.type === 'agent.proposed' && event.review,
  },
  actions: {
    stamp: assign({ now: ({ event }) => event.at }),
    // A step worked: what failed before it is behind the email.
    recovered: assign({ agentAttempts: 0, error: null }),
    // The request waiting for the human is answered (set again by the next one that waits).
    clearPending: assign({ pending: null }),
    keepFeedback: assign({
      feedback: ({ context, event }) =>
        event.type === 'human.answered' && event.feedback
          ? [...context.feedback, event.feedback]
          : context.feedback,
    }),
  },
}).createMachine({
  id: 'emailLifecycle',
  context: ({ input }) => ({
    emailId: input.emailId,
    now: input.at,
    classification: null,
    reasoning: null,
    pending: null,
    feedback: [],
    triageAttempts: 0,
    maxTriageAttempts: input.maxTriageAttempts ?? 3,
    agentAttempts: 0,
    maxAgentAttempts: input.maxAgentAttempts ?? 3,
    toolCalls: 0,
    outcome: null,
    error: null,
  }),
  initial: 'received',
  states: {
    received: {
      description: 'Arrived; the runtime reads it into one typed email.',
      on: {
        'email.parsed': { target: 'triaging', actions: 'stamp' },
        'email.invalid': {
          target: 'invalid',
          actions: ['stamp', assign({ outcome: 'invalid', error: ({ event }) => event.error })],
        },
      },
    },
    triaging: {
      description: 'Rules, then the model (or the offline router), decide ignore, notify or respond.',
      on: {
        'triage.decided': {
          target: 'triaged',
          actions: [
            'stamp',
            assign({
              classification: ({ event }) => event.classification,
              reasoning: ({ event }) => event.reasoning,
              error: null,
            }),
          ],
        },
        'triage.failed': [
          {
            // Stays in triaging: the runtime asks again later (the next pass, not at once).
            guard: 'mayRetryTriage',
            actions: [
              'stamp',
              assign({
                triageAttempts: ({ context }) => context.triageAttempts + 1,
                error: ({ event }) => event.error,
              }),
            ],
          },
          {
            target: 'failed',
            actions: [
              'stamp',
              assign({
                triageAttempts: ({ context }) => context.triageAttempts + 1,
                outcome: 'failed',
                error: ({ event }) => event.error,
              }),
            ],
          },
        ],
      },
    },
    triaged: {
      always: [
        { guard: 'classifiedIgnore', target: 'closing', actions: assign({ outcome: 'ignored' }) },
        {
          guard: 'classifiedNotify',
          target: 'notifying',
          actions: assign({ pending: 'Email Assistant: notify' }),
        },
        { target: 'responding' },
      ],
    },
    notifying: {
      description: 'In the inbox: the human may respond (with feedback) or ignore.',
      on: {
        'human.answered': [
          {
            guard: 'answeredRespond',
            target: 'responding',
            actions: ['stamp', 'keepFeedback', 'clearPending'],
          },
          {
            guard: 'answeredIgnore',
            target: 'closing',
            actions: ['stamp', 'clearPending', assign({ outcome: 'notified' })],
          },
        ],
      },
    },
    responding: {
      description: "The response agent's tool loop; consequential calls wait for review.",
      initial: 'drafting',
      states: {
        drafting: {
          on: {
            'agent.done': {
              target: '#emailLifecycle.closing',
              actions: ['stamp', 'recovered', assign({ outcome: 'answered' })],
            },
            'agent.proposed': [
              {
                guard: 'needsReview',
                target: 'reviewing',
                actions: ['stamp', 'recovered', assign({ pending: ({ event }) => event.action })],
              },
              { target: 'executing', actions: ['stamp', 'recovered'] },
            ],
          },
        },
        reviewing: {
          description: 'The proposed call waits for accept, edit, feedback or ignore.',
          on: {
            'human.answered': [
              { guard: 'answeredAcceptOrEdit', target: 'executing', actions: ['stamp', 'clearPending'] },
              {
                guard: 'answeredRespond',
                target: 'drafting',
                actions: ['stamp', 'keepFeedback', 'clearPending'],
              },
              {
                guard: 'answeredIgnore',
                target: '#emailLifecycle.closing',
                actions: ['stamp', 'clearPending', assign({ outcome: 'ignored' })],
              },
            ],
          },
        },
        executing: {
          on: {
            'tool.completed': {
              target: 'drafting',
              actions: ['stamp', 'recovered', assign({ toolCalls: ({ context }) => context.toolCalls + 1 })],
            },
          },
        },
      },
      on: {
        'agent.failed': [
          {
            // Stays where it was (drafting or executing): the runtime tries again on a later pass.
            guard: 'mayRetryAgent',
            actions: [
              'stamp',
              assign({
                agentAttempts: ({ context }) => (context.agentAttempts ?? 0) + 1,
                error: ({ event }) => event.error,
              }),
            ],
          },
          {
            target: 'failed',
            actions: [
              'stamp',
              'clearPending',
              assign({ outcome: 'failed', error: ({ event }) => event.error }),
            ],
          },
        ],
      },
    },
    closing: {
      description:
        'Labelled on every path; marked read only when a person saw it (answered it, or a reply went out).',
      on: {
        'email.closed': { target: 'done', actions: ['stamp', assign({ error: null })] },
        // Labelling can wait: the email stays here and is closed on a later pass.
        'email.close-failed': { actions: ['stamp', assign({ error: ({ event }) => event.error })] },
      },
    },
    done: { type: 'final' },
    invalid: { type: 'final' },
    failed: { type: 'final' },
  },
});
