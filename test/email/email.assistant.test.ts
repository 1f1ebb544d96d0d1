import { describe, expect, it } from 'vitest';
import { SimulatedClock } from '../../src/actors/clock.js';
import { EmailAssistant } from '../../src/actors/email/emailAssistant.js';
import { createLocalCalendar, createLocalMailbox } from '../../src/adapters/mail/localMailbox.js';
import { createMemoryStore } from '../../src/adapters/store/memory/memoryStore.js';
import { MODEL_NEEDED } from '../../src/email/responseAgent.js';
import { memoryNamespaces, PREFERENCES_KEY } from '../../src/email/triagePreferences.js';
import type { TroupeStore } from '../../src/ports/store.js';
import { isTroupeError, TroupeError } from '../../src/ports/troupeError.js';
import { assistantOn, EMAIL_START } from '../support/emailHarness.js';

// Wednesday 25 November 2026, 10:00 in Berlin.
const START = EMAIL_START;

/** The store, with the `nth` write to `collection` and every write after it failing, as if the process died there. */
function dyingAt(store: TroupeStore, collection: string, nth: number): TroupeStore {
  let seen = 0;
  let dead = false;
  return {
    ...store,
    close: () => store.close(),
    documents: {
      ...store.documents,
      get: (c, k) => store.documents.get(c, k),
      list: (c, o) => store.documents.list(c, o),
      delete: (c, key, options) =>
        dead ? Promise.reject(new Error('the process died')) : store.documents.delete(c, key, options),
      put: (c, key, value, options) => {
        if (c === collection && ++seen === nth) dead = true;
        if (dead) return Promise.reject(new Error('the process died'));
        return store.documents.put(c, key, value, options);
      },
      // A batch is written whole or not at all: one that holds the deadly write is not written.
      batch: (operations, at) => {
        for (const o of operations)
          if (o.op === 'put' && o.collection === collection && ++seen === nth) dead = true;
        if (dead) return Promise.reject(new Error('the process died'));
        return store.documents.batch(operations, at);
      },
    },
  };
}

const newsletter = {
  id: 'n1',
  from: 'The Weekly Byte <newsletter@bytes.example>',
  to: 'sam@acme.dev',
  subject: 'This week in JavaScript',
  body: 'Top stories.',
};
const statusUpdate = {
  id: 's1',
  threadId: 'th-s1',
  from: 'Jordan <jordan@acme.dev>',
  to: 'sam@acme.dev',
  subject: 'Project Atlas status update',
  body: 'FYI: Atlas is on track. No action items.',
};
const question = {
  id: 'q1',
  threadId: 'th-q1',
  messageId: '<q1@mail.acme.dev>',
  references: '<root@mail.acme.dev>',
  from: 'Marco Rossi <marco@acme.dev>',
  to: 'sam@acme.dev',
  subject: 'API limits',
  body: 'What rate limit should the public API use?',
};
const meeting = {
  id: 'm1',
  from: 'Ben <ben@customer.example>',
  to: 'sam@acme.dev',
  subject: 'Meeting next week?',
  body: 'Would you have 30 minutes for a call?',
};

describe('the email assistant, end to end on the local mailbox', () => {
  it('an ignored email is closed with its label and nothing waits; the same email again is not processed twice', async () => {
    const store = createMemoryStore();
    const { assistant, mailbox } = assistantOn(store);
    const record = await assistant.receive(newsletter);
    expect(!isTroupeError(record) && record.state.value).toBe('done');
    expect(!isTroupeError(record) && record.decision?.decidedBy).toBe('rule');
    expect(await mailbox.closed('n1')).toBe('troupe/ignored');
    expect(await assistant.pending()).toEqual([]);
    await assistant.receive(newsletter);
    expect((await store.documents.list('email-lifecycle')).length).toBe(1);
  });

  it('a notify email waits in the inbox with the seed’s request; ignoring it closes it and teaches triage', async () => {
    const store = createMemoryStore();
    const { assistant, mailbox } = assistantOn(store);
    await assistant.receive(statusUpdate);
    const [item] = await assistant.pending();
    expect(item?.request.action_request.action).toBe('Email Assistant: notify');
    const { item: answered, record } = await assistant.answer(item?.id as string, { type: 'ignore' });
    expect(record.state.value).toBe('done');
    expect(record.state.context.outcome).toBe('notified');
    expect(await mailbox.closed('s1')).toBe('troupe/notified');
    expect(answered.memory).toMatchObject({ namespace: memoryNamespaces.triage, version: 2 });
    // The next update like it from Jordan is ignored without asking.
    const next = await assistant.receive({
      ...statusUpdate,
      id: 's2',
      subject: 'Project Atlas status update, week 2',
    });
    expect(!isTroupeError(next) && next.state.context.outcome).toBe('ignored');
  });

  it('a notify answered with feedback goes to the response agent, whose draft is reviewed, edited and sent once in the thread', async () => {
    const store = createMemoryStore();
    const { assistant, mailbox } = assistantOn(store);
    await assistant.receive(statusUpdate);
    const [notify] = await assistant.pending();
    await assistant.answer(notify?.id as string, {
      type: 'response',
      args: 'tell Jordan thanks, great work',
    });
    const [review] = await assistant.pending();
    expect(review?.request.action_request.action).toBe('send_email_tool');
    expect(review?.request.action_request.args).toMatchObject({
      to: 'jordan@acme.dev',
      subject: 'Re: Project Atlas status update',
    });
    // Offline, feedback the rules cannot act on is not pasted in: the draft says a model is needed.
    const content = String(review?.request.action_request.args.content);
    expect(content).toContain(MODEL_NEEDED);
    expect(content).toContain('Thanks for your email about “Project Atlas status update”.');
    expect(content).not.toMatch(/great work/iu);
    // The human edits the draft (as a JSON string, as Agent Inbox's editor sends it).
    const edited = {
      to: 'jordan@acme.dev',
      subject: 'Re: Project Atlas status update',
      content: 'Thanks Jordan, great work!',
    };
    const { record, item } = await assistant.answer(review?.id as string, {
      type: 'edit',
      args: JSON.stringify({ action: 'send_email_tool', args: edited }),
    });
    expect(item.memory?.namespace).toBe(memoryNamespaces.response);
    expect(record.state.value).toBe('done');
    expect(record.state.context.outcome).toBe('answered');
    const sent = await mailbox.sent();
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({ ...edited, threadId: 'th-s1', references: [] });
    const profile = await store.memory.get(memoryNamespaces.response, PREFERENCES_KEY);
    // What the edit shows, in one line of the profile: never the draft pasted in.
    expect(profile?.value).toMatch(/\n- Prefer shorter replies to jordan@acme\.dev$/u);
    expect(profile?.value).not.toMatch(/great work/u);
  });

  it('a finished email read back has the context it finished with, though its stored record keeps less', async () => {
    const store = createMemoryStore();
    const { assistant } = assistantOn(store);
    await assistant.receive({ ...statusUpdate, body: 'x'.repeat(500) });
    const [notify] = await assistant.pending();
    const { record } = await assistant.answer(notify?.id as string, { type: 'response', args: 'say thanks' });
    const [review] = await assistant.pending();
    const { record: finished } = await assistant.answer(review?.id as string, { type: 'accept' });
    expect(finished.state.value).toBe('done');
    const read = await assistant.record('s1');
    expect(read?.state.context).toEqual({ ...finished.state.context, reasoning: null });
    expect(read?.state.context).toMatchObject({
      emailId: 's1',
      classification: 'notify',
      feedback: ['say thanks'],
      toolCalls: 1,
      outcome: 'answered',
      maxTriageAttempts: 3,
      error: null,
    });
    expect(read?.email.body).toHaveLength(100);
    expect(record.state.value).not.toBe('done');
    const stored = (await store.documents.get<{ state: { context: object } }>('email-lifecycle', 's1'))
      ?.value;
    expect(stored?.state.context).not.toHaveProperty('maxAgentAttempts');
  });

  it('a done email still shows each of its interrupts as the human saw it, and its record keeps a draft once', async () => {
    const store = createMemoryStore();
    const { assistant } = assistantOn(store);
    await assistant.receive(statusUpdate);
    const [notify] = await assistant.pending();
    await assistant.answer(notify?.id as string, { type: 'response', args: 'say thanks' });
    const [review] = await assistant.pending();
    const { record } = await assistant.answer(review?.id as string, { type: 'accept' });
    expect(record.state.value).toBe('done');
    // Each answered interrupt reads back with the request it showed (less the email's body).
    for (const shown of [notify, review]) {
      const answered = await assistant.interrupt(shown?.id as string);
      expect(answered).toMatchObject({ id: shown?.id, emailId: 's1', status: 'answered' });
      expect(answered?.request.action_request).toEqual(shown?.request.action_request);
      expect(answered?.request.config).toEqual(shown?.request.config);
      expect(answered?.request.description).toBe(
        shown?.request.description.split('\n\n').slice(0, 2).join('\n\n'),
      );
    }
    expect((await assistant.interrupt(notify?.id as string))?.memory).toMatchObject({
      namespace: memoryNamespaces.triage,
      version: 2,
    });
    // The accepted draft is kept once, in the step that sent it.
    const content = JSON.stringify(String(review?.request.action_request.args.content)).slice(1, -1);
    const stored = JSON.stringify((await store.documents.get('email-lifecycle', 's1'))?.value);
    expect(stored.split(content).length - 1).toBe(1);
    // Answering again is refused, naming how it was answered.
    await expect(assistant.answer(review?.id as string, { type: 'ignore' })).rejects.toThrow(
      'already answered (accept)',
    );
  });

  it('an edited draft: the interrupt keeps what was proposed, the reply sent is the edit', async () => {
    const store = createMemoryStore();
    const { assistant, mailbox } = assistantOn(store);
    await assistant.receive(question);
    const [review] = await assistant.pending();
    await assistant.answer(review?.id as string, {
      type: 'edit',
      args: { content: 'Edited: 100 per minute.' },
    });
    const [sent] = await mailbox.sent();
    expect(sent?.content).toBe('Edited: 100 per minute.');
    const answered = await assistant.interrupt(review?.id as string);
    expect(answered?.request.action_request.args).toEqual(review?.request.action_request.args);
    expect(answered?.answer).toEqual({ type: 'edit', args: { content: 'Edited: 100 per minute.' } });
    expect(answered?.memory?.namespace).toBe(memoryNamespaces.response);
  });

  it('feedback on a draft brings a new draft as a new interrupt; the answered one stays answered', async () => {
    const store = createMemoryStore();
    const { assistant } = assistantOn(store);
    await assistant.receive(question);
    const [first] = await assistant.pending();
    await assistant.answer(first?.id as string, {
      type: 'response',
      args: 'use 100 requests per minute per key',
    });
    const [second] = await assistant.pending();
    expect(second?.id).not.toBe(first?.id);
    // Offline, the earlier draft is kept and the draft says the change needs a model.
    expect(String(second?.request.action_request.args.content)).toBe(
      `${MODEL_NEEDED}\n\n${String(first?.request.action_request.args.content)}`,
    );
    const answered = await assistant.interrupt(first?.id as string);
    expect(answered?.status).toBe('answered');
    expect(answered?.answer).toEqual({ type: 'response', args: 'use 100 requests per minute per key' });
    // The request as it was shown, the body left to the mailbox.
    expect(answered?.request.action_request).toEqual(first?.request.action_request);
    expect(answered?.request.config).toEqual(first?.request.config);
    expect(first?.request.description.startsWith(answered?.request.description as string)).toBe(true);
  });

  it('a reply answers in the thread with In-Reply-To and References', async () => {
    const store = createMemoryStore();
    const { assistant, mailbox } = assistantOn(store);
    await assistant.receive(question);
    const [review] = await assistant.pending();
    await assistant.answer(review?.id as string, { type: 'accept' });
    const [sent] = await mailbox.sent();
    expect(sent).toMatchObject({
      to: 'marco@acme.dev',
      subject: 'Re: API limits',
      inReplyTo: '<q1@mail.acme.dev>',
      references: ['<root@mail.acme.dev>', '<q1@mail.acme.dev>'],
      threadId: 'th-q1',
    });
  });

  it('a meeting request: the calendar is checked without asking, the invitation is reviewed and booked', async () => {
    const store = createMemoryStore();
    const { assistant, calendar } = assistantOn(store);
    await assistant.receive(meeting);
    const [review] = await assistant.pending();
    expect(review?.request.action_request).toMatchObject({
      action: 'schedule_meeting_tool',
      args: {
        attendees: ['ben@customer.example'],
        preferred_day: '2026-11-26',
        start_time: '09:00',
        duration_minutes: 30,
      },
    });
    await assistant.answer(review?.id as string, { type: 'accept' });
    expect(await calendar.events()).toHaveLength(1);
    // Once booked, the short reply saying so is reviewed, then the email is done.
    const [reply] = await assistant.pending();
    expect(reply?.request.action_request).toMatchObject({
      action: 'send_email_tool',
      args: {
        to: 'ben@customer.example',
        content: expect.stringContaining(
          'I have sent you an invitation for 30 minutes on 2026-11-26 at 09:00',
        ),
      },
    });
    const { record } = await assistant.answer(reply?.id as string, { type: 'accept' });
    expect(record.state.value).toBe('done');
    // The next request for that day gets the next free slot.
    await assistant.receive({ ...meeting, id: 'm2' });
    const [second] = await assistant.pending();
    expect(second?.request.action_request.args).toMatchObject({
      preferred_day: '2026-11-26',
      start_time: '09:30',
    });
  });

  it('refuses answers a request does not allow, edits that do not fit, and second answers, changing nothing', async () => {
    const store = createMemoryStore();
    const { assistant } = assistantOn(store);
    await assistant.receive(statusUpdate);
    const [notify] = await assistant.pending();
    await expect(assistant.answer(notify?.id as string, { type: 'accept' })).rejects.toThrow(
      /“accept” is not allowed for Email Assistant: notify/u,
    );
    await assistant.answer(notify?.id as string, { type: 'response', args: 'reply please' });
    await expect(assistant.answer(notify?.id as string, { type: 'ignore' })).rejects.toThrow(
      /already answered/u,
    );
    const [review] = await assistant.pending();
    await expect(
      assistant.answer(review?.id as string, { type: 'edit', args: { args: { subject: '   ' } } }),
    ).rejects.toThrow(/does not fit send_email_tool: subject/u);
    expect((await assistant.pending()).map((p) => p.id)).toEqual([review?.id]);
  });

  it('two answers to one interrupt at the same time: one stands, the other is told so', async () => {
    const store = createMemoryStore();
    const { assistant } = assistantOn(store);
    await assistant.receive(statusUpdate);
    const [item] = await assistant.pending();
    const results = await Promise.allSettled([
      assistant.answer(item?.id as string, { type: 'ignore' }),
      assistant.answer(item?.id as string, { type: 'response', args: 'reply' }),
    ]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const refused = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
    expect(String(refused.reason)).toMatch(/TROUPE_INBOX_INVALID|answered/u);
  });

  it('a restart in the middle of a review resumes it, and the reply is sent once', async () => {
    const store = createMemoryStore();
    const first = assistantOn(store);
    await first.assistant.receive(question);
    const [review] = await first.assistant.pending();
    // A new process on the same store.
    const second = assistantOn(store);
    expect(await second.assistant.resume()).toHaveLength(1);
    expect((await second.assistant.pending()).map((p) => p.id)).toEqual([review?.id]);
    await second.assistant.answer(review?.id as string, { type: 'accept' });
    await second.assistant.resume();
    expect(await second.mailbox.sent()).toHaveLength(1);
  });

  it('a crash right after the reply went out (before the step was written) does not send it twice on restart', async () => {
    const store = createMemoryStore();
    let crashNextWrite = false;
    const crashing: TroupeStore = {
      ...store,
      close: () => store.close(),
      documents: {
        ...store.documents,
        get: (c, k) => store.documents.get(c, k),
        list: (c, o) => store.documents.list(c, o),
        delete: (c, k, o) => store.documents.delete(c, k, o),
        put: (collection, key, value, options) => {
          if (crashNextWrite && collection === 'email-lifecycle') {
            crashNextWrite = false;
            return Promise.reject(new Error('the process died'));
          }
          return store.documents.put(collection, key, value, options);
        },
        batch: (operations, at) => {
          if (crashNextWrite && operations.some((o) => o.collection === 'email-lifecycle')) {
            crashNextWrite = false;
            return Promise.reject(new Error('the process died'));
          }
          return store.documents.batch(operations, at);
        },
      },
    };
    const clock = new SimulatedClock(START);
    const mailbox = createLocalMailbox(store.documents, { now: () => clock.now() });
    const sending = {
      ...mailbox,
      sendReply: async (reply: Parameters<typeof mailbox.sendReply>[0], key: string) => {
        const sent = await mailbox.sendReply(reply, key);
        crashNextWrite = true;
        return sent;
      },
    };
    const dying = new EmailAssistant({
      store: crashing,
      mailbox: sending,
      calendar: createLocalCalendar(store.documents),
      clock,
      userName: 'Sam',
      timeZone: 'Europe/Berlin',
    });
    await dying.receive(question);
    const [review] = await dying.pending();
    await expect(dying.answer(review?.id as string, { type: 'accept' })).rejects.toThrow('the process died');
    expect(await mailbox.sent()).toHaveLength(1);

    // A minute on (a younger answer is left to the process that took it).
    clock.setNow(clock.now() + 60_000);
    const restarted = assistantOn(store, clock);
    const [resumed] = await restarted.assistant.resume();
    expect(resumed?.state.value).toBe('done');
    expect(await mailbox.sent()).toHaveLength(1);
  });

  it('an answer stored just before the process died is carried through on restart, learning once', async () => {
    const store = createMemoryStore();
    const clock = new SimulatedClock(START);
    await assistantOn(store, clock).assistant.receive(statusUpdate);
    // The answer is stored, the preferences learn from it, then the process dies before it writes
    // what it learned with the email's record (the 2nd record write of the answer).
    const dying = assistantOn(dyingAt(store, 'email-lifecycle', 2), clock);
    await expect(dying.assistant.answer('s1#1', { type: 'ignore' })).rejects.toThrow('the process died');
    const learnedBefore = await store.memory.history(memoryNamespaces.triage, PREFERENCES_KEY, 50);

    // A minute on (a younger answer is left to the process that took it).
    clock.setNow(clock.now() + 60_000);
    const restarted = assistantOn(store, clock);
    const [resumed] = await restarted.assistant.resume();
    expect(resumed?.state.value).toBe('done');
    expect(await restarted.mailbox.closed('s1')).toBe('troupe/notified');
    const learnedAfter = await store.memory.history(memoryNamespaces.triage, PREFERENCES_KEY, 50);
    expect(learnedAfter.length).toBe(learnedBefore.length);
    expect(await restarted.assistant.pending()).toEqual([]);
  });

  it('an answer stored, then the process died before anything else: on restart the email goes on from it', async () => {
    const store = createMemoryStore();
    const clock = new SimulatedClock(START);
    await assistantOn(store, clock).assistant.receive(question);
    // The answer is the first write to the email's record; the second would have been its end.
    const dying = assistantOn(dyingAt(store, 'email-lifecycle', 2), clock);
    await expect(dying.assistant.answer('q1#1', { type: 'accept' })).rejects.toThrow('the process died');
    // Another process at once leaves the answer to the one that took it (it may still be at work)…
    const [untouched] = await assistantOn(store, clock).assistant.resume();
    expect(untouched?.state.value).toEqual({ responding: 'reviewing' });
    // (the dying process had sent the reply already: what follows sends nothing more)
    expect(await assistantOn(store, clock).mailbox.sent()).toHaveLength(1);
    // …and a minute on, carries it through.
    clock.setNow(clock.now() + 60_000);
    const restarted = assistantOn(store, clock);
    const [resumed] = await restarted.assistant.resume();
    expect(resumed?.state.value).toBe('done');
    const [sent, ...more] = await restarted.mailbox.sent();
    expect(more).toHaveLength(0);
    expect(await restarted.assistant.interrupt('q1#1')).toMatchObject({
      status: 'answered',
      answer: { type: 'accept' },
      request: { action_request: { action: 'send_email_tool', args: { to: sent?.to } } },
    });
  });

  it('the process died writing an email that waits: its interrupt was not kept either, and the email delivered again waits on interrupt #1', async () => {
    const store = createMemoryStore();
    const clock = new SimulatedClock(START);
    const dying = assistantOn(dyingAt(store, 'email-lifecycle', 1), clock);
    await expect(dying.assistant.receive(statusUpdate)).rejects.toThrow('the process died');
    const restarted = assistantOn(store, clock);
    expect(await restarted.assistant.pending()).toEqual([]);
    expect(await restarted.assistant.record('s1')).toBeUndefined();
    const again = await restarted.assistant.receive(statusUpdate);
    expect(!isTroupeError(again) && again.interruptId).toBe('s1#1');
    expect((await restarted.assistant.pending()).map((p) => p.id)).toEqual(['s1#1']);
  });

  it('an interrupt left in the inbox without its email (written apart by an earlier version): the email delivered again waits on that same interrupt', async () => {
    const earlier = createMemoryStore();
    const clock = new SimulatedClock(START);
    await assistantOn(earlier, clock).assistant.receive(statusUpdate);
    const left = await earlier.documents.get('email-inbox', 's1#1');
    const store = createMemoryStore();
    await store.documents.put('email-inbox', 's1#1', left?.value);
    clock.setNow(START + 5_000);
    const restarted = assistantOn(store, clock);
    const again = await restarted.assistant.receive(statusUpdate);
    expect(!isTroupeError(again) && again.interruptId).toBe('s1#1');
    const pending = await restarted.assistant.pending();
    expect(pending.map((p) => [p.id, p.createdAt])).toEqual([['s1#1', START]]);
  });

  it('two processes given the same email at once process it once: one interrupt waits, both see the same record', async () => {
    const store = createMemoryStore();
    const clock = new SimulatedClock(START);
    const [a, b] = [assistantOn(store, clock), assistantOn(store, clock)];
    const [first, second] = await Promise.all([a.assistant.receive(question), b.assistant.receive(question)]);
    expect(!isTroupeError(first) && first.interruptId).toBe('q1#1');
    expect(!isTroupeError(second) && second.interruptId).toBe('q1#1');
    expect((await a.assistant.pending()).map((p) => p.id)).toEqual(['q1#1']);
    await a.assistant.answer('q1#1', { type: 'accept' });
    expect(await a.mailbox.sent()).toHaveLength(1);
  });

  it('a reply the mailbox cannot send now waits with the error and goes out on a later pass, once; the third failure fails the email', async () => {
    const store = createMemoryStore();
    const clock = new SimulatedClock(START);
    const local = createLocalMailbox(store.documents, { now: () => clock.now() });
    let outage = 1;
    const flaky = {
      ...local,
      sendReply: async (reply: Parameters<typeof local.sendReply>[0], key: string) => {
        if (outage-- > 0)
          throw new TroupeError('TROUPE_STORE_UNAVAILABLE', 'the mail server is down', { retryable: true });
        return local.sendReply(reply, key);
      },
    };
    const assistant = new EmailAssistant({
      store,
      mailbox: flaky,
      calendar: createLocalCalendar(store.documents),
      clock,
      userName: 'Sam',
      timeZone: 'Europe/Berlin',
    });
    await assistant.receive(question);
    const { record } = await assistant.answer('q1#1', { type: 'accept' });
    expect(record.state.value).toEqual({ responding: 'executing' });
    expect(record.state.context.error).toMatchObject({
      message: expect.stringContaining('the mail server is down'),
    });
    expect(await local.sent()).toHaveLength(0);
    const [later] = await assistant.resume();
    expect(later?.state.value).toBe('done');
    expect(later?.state.context.error).toBeNull();
    expect(await local.sent()).toHaveLength(1);

    outage = 3;
    await assistant.receive({ ...question, id: 'q2' });
    await assistant.answer('q2#1', { type: 'accept' });
    await assistant.resume();
    const [gaveUp] = await assistant.resume();
    expect(gaveUp?.state.value).toBe('failed');
    expect(gaveUp?.state.context.outcome).toBe('failed');
    expect(await local.sent()).toHaveLength(1);
  });

  it('a mailbox that cannot label an email now leaves it closing, and a later pass closes it', async () => {
    const store = createMemoryStore();
    const clock = new SimulatedClock(START);
    const local = createLocalMailbox(store.documents, { now: () => clock.now() });
    let down = true;
    const assistant = new EmailAssistant({
      store,
      mailbox: {
        ...local,
        close: async (id: string, outcome: string) => {
          if (down) throw new Error('connection reset');
          return local.close(id, outcome);
        },
      },
      calendar: createLocalCalendar(store.documents),
      clock,
      userName: 'Sam',
      timeZone: 'Europe/Berlin',
    });
    const first = await assistant.receive(newsletter);
    expect(!isTroupeError(first) && first.state.value).toBe('closing');
    down = false;
    const [closed] = await assistant.resume();
    expect(closed?.state.value).toBe('done');
    expect(await local.closed('n1')).toBe('troupe/ignored');
  });

  it('a bad email is refused with TROUPE_EMAIL_INVALID and the inbox goes on', async () => {
    const store = createMemoryStore();
    const { assistant } = assistantOn(store);
    const bad = await assistant.receive({ from: 'x@y', subject: 'no body or id' });
    expect(isTroupeError(bad) && bad.code).toBe('TROUPE_EMAIL_INVALID');
    const good = await assistant.receive(newsletter);
    expect(!isTroupeError(good) && good.state.value).toBe('done');
  });
});
