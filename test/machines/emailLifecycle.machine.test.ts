/**
 * Model-based test of the email lifecycle: a breadth-first walk over every sequence of the event
 * cases below (replayed on a live actor from the start, since the machine is pure), keyed by state
 * and the data that steers it, until no new key appears. Every state node of the machine
 * definition must be visited and every transition (each guarded branch, each `always`) taken, and
 * invariants hold in every snapshot reached.
 */
import { describe, expect, it } from 'vitest';
import type { SnapshotFrom } from 'xstate';
import { compileMachine } from '../../src/engine/compiledMachine.js';
import {
  type EmailLifecycleEvent,
  emailLifecycleMachine,
} from '../../src/machines/emailLifecycle.machine.js';
import { allStateIds, allTransitionKeys, missing, recordingActor } from '../support/machineCoverage.js';

type Snapshot = SnapshotFrom<typeof emailLifecycleMachine>;

const failure = { code: 'TROUPE_MODEL_TIMEOUT', message: 'slow' };
/** The event cases; `at` is filled in from the snapshot (a second after its last event). */
type EventCase = EmailLifecycleEvent extends infer E ? (E extends unknown ? Omit<E, 'at'> : never) : never;
const cases: Record<string, EventCase> = {
  parsed: { type: 'email.parsed' },
  invalid: { type: 'email.invalid', error: { code: 'TROUPE_EMAIL_INVALID', message: 'no from' } },
  'triage ignore': { type: 'triage.decided', classification: 'ignore', reasoning: 'newsletter' },
  'triage notify': { type: 'triage.decided', classification: 'notify', reasoning: 'FYI' },
  'triage respond': { type: 'triage.decided', classification: 'respond', reasoning: 'a question' },
  'triage fails, retryable': { type: 'triage.failed', error: failure, retryable: true },
  'triage fails for good': { type: 'triage.failed', error: failure, retryable: false },
  'human responds': { type: 'human.answered', answer: 'response', feedback: 'say yes' },
  'human ignores': { type: 'human.answered', answer: 'ignore' },
  'human accepts': { type: 'human.answered', answer: 'accept' },
  'human edits': { type: 'human.answered', answer: 'edit' },
  'agent proposes an email': { type: 'agent.proposed', action: 'send_email_tool', review: true },
  'agent checks the calendar': {
    type: 'agent.proposed',
    action: 'check_calendar_availability_tool',
    review: false,
  },
  'tool completed': { type: 'tool.completed' },
  'agent done': { type: 'agent.done' },
  'agent fails': { type: 'agent.failed', error: failure, retryable: false },
  'agent fails, retryable': { type: 'agent.failed', error: failure, retryable: true },
  'closing fails': { type: 'email.close-failed', error: failure },
  closed: { type: 'email.closed' },
};
const names = Object.keys(cases);

const eventOf = (name: string, snapshot: Snapshot) =>
  ({ ...cases[name], at: snapshot.context.now + 1_000 }) as EmailLifecycleEvent;

const keyOf = (s: Snapshot) =>
  JSON.stringify([
    s.value,
    s.context.classification,
    s.context.pending,
    s.context.triageAttempts,
    s.context.outcome,
    s.context.feedback.length > 0,
    s.context.toolCalls > 0,
  ]);

function invariants(s: Snapshot, path: string[]): void {
  const where = `after ${path.join(' → ') || 'start'}`;
  const state = JSON.stringify(s.value);
  if (s.status === 'done') expect(s.context.outcome, where).not.toBeNull();
  if (s.matches('closing')) expect(s.context.outcome, where).toMatch(/^(ignored|notified|answered)$/u);
  const waiting = s.matches('notifying') || s.matches({ responding: 'reviewing' });
  expect(s.context.pending !== null, `${where}: pending in ${state}`).toBe(waiting);
  if (s.matches('notifying')) expect(s.context.classification, where).toBe('notify');
  if (s.matches('invalid')) expect(s.context.error?.code, where).toBe('TROUPE_EMAIL_INVALID');
  expect(s.context.triageAttempts, where).toBeLessThanOrEqual(s.context.maxTriageAttempts);
}

describe('email lifecycle model', () => {
  it('every state is visited and every transition taken, with the invariants holding', () => {
    const taken = new Set<string>();
    const visited = new Set<string>();
    const seen = new Set<string>();
    const queue: string[][] = [[]];
    let replays = 0;
    // The compiled engine (what the email assistant runs) must step exactly as xstate does.
    const compiled = compileMachine(emailLifecycleMachine);
    while (queue.length > 0) {
      const path = queue.shift() as string[];
      const actor = recordingActor(emailLifecycleMachine, { emailId: 'e1', at: 0 }, taken, visited);
      let fast = compiled.initial({ emailId: 'e1', at: 0 });
      for (const name of path) {
        const event = eventOf(name, actor.getSnapshot());
        actor.send(event);
        fast = compiled.step(fast, event);
        const live = actor.getSnapshot();
        expect(
          { value: fast.value, context: fast.context, status: fast.status },
          `compiled, after ${path.join(' → ')}`,
        ).toEqual({
          value: live.value,
          context: live.context,
          status: live.status,
        });
      }
      replays += 1;
      const snapshot = actor.getSnapshot();
      invariants(snapshot, path);
      const key = keyOf(snapshot);
      actor.stop();
      if (seen.has(key)) continue;
      seen.add(key);
      if (snapshot.status !== 'done') for (const name of names) queue.push([...path, name]);
    }
    expect(missing(allStateIds(emailLifecycleMachine), visited)).toEqual([]);
    expect(missing(allTransitionKeys(emailLifecycleMachine), taken)).toEqual([]);
    expect(seen.size).toBeGreaterThan(15);
    expect(replays).toBeLessThan(5_000);
  });

  it('walks the seed’s paths to the outcome each should have', () => {
    const run = (...steps: string[]) => {
      const actor = recordingActor(emailLifecycleMachine, { emailId: 'e1', at: 0 }, new Set(), new Set());
      for (const name of steps) actor.send(eventOf(name, actor.getSnapshot()));
      return actor.getSnapshot();
    };
    expect(run('parsed', 'triage ignore', 'closed').context.outcome).toBe('ignored');
    expect(run('parsed', 'triage notify', 'human ignores', 'closed').context.outcome).toBe('notified');
    const respondAfterNotify = run('parsed', 'triage notify', 'human responds');
    expect(respondAfterNotify.matches({ responding: 'drafting' })).toBe(true);
    expect(respondAfterNotify.context.feedback).toEqual(['say yes']);
    const answered = run(
      'parsed',
      'triage respond',
      'agent checks the calendar',
      'tool completed',
      'agent proposes an email',
      'human responds',
      'agent proposes an email',
      'human edits',
      'tool completed',
      'agent done',
      'closed',
    );
    expect(answered.status).toBe('done');
    expect(answered.context).toMatchObject({ outcome: 'answered', toolCalls: 2, feedback: ['say yes'] });
    expect(
      run('parsed', 'triage respond', 'agent proposes an email', 'human ignores', 'closed').context.outcome,
    ).toBe('ignored');
    // Three retryable triage failures (the default limit) end the email as failed.
    const failed = run(
      'parsed',
      'triage fails, retryable',
      'triage fails, retryable',
      'triage fails, retryable',
    );
    expect(failed.value).toBe('failed');
    expect(failed.context.triageAttempts).toBe(3);
    // A retryable failure of the agent's step leaves it where it was, with the error, until a try
    // works (the error is then cleared) or the third one fails.
    const waiting = run('parsed', 'triage respond', 'agent fails, retryable');
    expect(waiting.matches({ responding: 'drafting' })).toBe(true);
    expect(waiting.context).toMatchObject({ agentAttempts: 1, error: failure });
    const recovered = run('parsed', 'triage respond', 'agent fails, retryable', 'agent proposes an email');
    expect(recovered.context).toMatchObject({ agentAttempts: 0, error: null });
    const gaveUp = run(
      'parsed',
      'triage respond',
      'agent fails, retryable',
      'agent fails, retryable',
      'agent fails, retryable',
    );
    expect(gaveUp.value).toBe('failed');
    expect(run('parsed', 'triage respond', 'agent fails').value).toBe('failed');
  });

  it('ignores answers that the waiting request does not allow', () => {
    const actor = recordingActor(emailLifecycleMachine, { emailId: 'e1', at: 0 }, new Set(), new Set());
    for (const name of ['parsed', 'triage notify', 'human accepts', 'human edits'])
      actor.send(eventOf(name, actor.getSnapshot()));
    expect(actor.getSnapshot().value).toBe('notifying');
  });
});
