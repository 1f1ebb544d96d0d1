import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { SimulatedClock } from '../../src/actors/clock.js';
import { type EmailRecord, type InboxItem, KEPT_BODY } from '../../src/actors/email/emailRecord.js';
import { createMemoryStore } from '../../src/adapters/store/memory/memoryStore.js';
import { openSqliteStore } from '../../src/adapters/store/sqlite/sqliteStore.js';
import type { HumanResponse } from '../../src/email/agentInbox.js';
import type { AgentModel, AgentStepRequest } from '../../src/ports/agentModel.js';
import type { ObjectModel, ObjectRequest } from '../../src/ports/objectModel.js';
import type { TroupeStore } from '../../src/ports/store.js';
import { TroupeError } from '../../src/ports/troupeError.js';
import { assistantOn, EMAIL_START } from '../support/emailHarness.js';
import { runTroupe } from '../support/runTroupe.js';

// The human-in-the-loop answer flow, attacked as a hostile user or operator would: odd interrupt
// ids, answers at the same time, stops at every write, and records read back after compaction.

const START = EMAIL_START;

const statusUpdate = {
  id: 's1',
  from: 'Jordan <jordan@acme.dev>',
  to: 'sam@acme.dev',
  subject: 'Project Atlas status update',
  body: 'FYI: Atlas is on track. No action items.',
};

/** A model that triages as respond, asks the human first, then drafts a reply, then is done. */
function askingModel(): ObjectModel & AgentModel {
  return {
    id: 'test:asking',
    async generateObject<Schema extends z.ZodType>(request: ObjectRequest<Schema>) {
      if (request.schemaName === 'triage_decision')
        return { reasoning: 'a question for Sam', classification: 'respond' } as z.output<Schema>;
      throw new Error('no preference updates in this test');
    },
    async nextToolCall(request: AgentStepRequest) {
      const called = (tool: string) =>
        request.messages.some(
          (m) =>
            m.role === 'tool' &&
            m.content.some((part) => part.type === 'tool-result' && part.toolName === tool),
        );
      const text = JSON.stringify(request.messages);
      const answer = (toolName: string, input: unknown) => ({ toolCallId: 'c', toolName, input });
      if (called('send_email_tool') && !text.includes('Not sent')) return answer('Done', { done: true });
      if (text.includes('100 per minute'))
        return answer('send_email_tool', {
          to: 'marco@acme.dev',
          subject: 'Re: API limits',
          content: 'Hi Marco, 100 per minute.',
        });
      return answer('Question', { content: 'Which limit does finance want?' });
    },
  };
}

/** The assistant on `store` with a test model: for triage, and for drafting when it can. */
function withModel(
  store: TroupeStore,
  clock: SimulatedClock,
  model?: ObjectModel | (ObjectModel & AgentModel),
) {
  return assistantOn(store, clock, model, model && 'nextToolCall' in model ? { agentModel: model } : {});
}

/** The store of a process that dies at its `nth` write (of any kind): that write and all after fail. */
function dyingAtWrite(store: TroupeStore, nth: number): { store: TroupeStore; died: () => boolean } {
  let seen = 0;
  let dead = false;
  const write = <T>(run: () => Promise<T>): Promise<T> => {
    if (!dead && ++seen === nth) dead = true;
    return dead ? Promise.reject(new Error('the process died')) : run();
  };
  return {
    died: () => dead,
    store: {
      ...store,
      close: () => store.close(),
      documents: {
        ...store.documents,
        get: (c, k) => store.documents.get(c, k),
        list: (c, o) => store.documents.list(c, o),
        put: (c, k, v, o) => write(() => store.documents.put(c, k, v, o)),
        delete: (c, k, o) => write(() => store.documents.delete(c, k, o)),
        batch: (ops, at) => write(() => store.documents.batch(ops, at)),
      },
      memory: {
        ...store.memory,
        get: (n, k) => store.memory.get(n, k),
        history: (n, k, l) => store.memory.history(n, k, l),
        list: (n) => store.memory.list(n),
        put: (n, k, v, o) => write(() => store.memory.put(n, k, v, o)),
      },
    },
  };
}

const namespaces = [
  'email_assistant/triage_preferences',
  'email_assistant/response_preferences',
  'email_assistant/cal_preferences',
];

interface Flow {
  name: string;
  email: Record<string, unknown>;
  answers: HumanResponse[];
  model?: () => ObjectModel & AgentModel;
  /** Which answers teach a memory version. */
  teaches: boolean[];
  /** Replies and invitations it ends with (each once). */
  sends: number;
}

const flows: Flow[] = [
  {
    name: 'notify → respond → edit',
    email: statusUpdate,
    answers: [
      { type: 'response', args: 'tell Jordan thanks' },
      { type: 'response', args: 'shorter please' },
      { type: 'edit', args: { content: 'Hi Jordan, thanks! Sam' } },
    ],
    teaches: [true, true, true],
    sends: 1,
  },
  {
    name: 'notify → respond → accept',
    email: statusUpdate,
    answers: [{ type: 'response', args: 'tell Jordan thanks' }, { type: 'accept' }],
    teaches: [true, false],
    sends: 1,
  },
  {
    name: 'notify → ignore',
    email: statusUpdate,
    answers: [{ type: 'ignore' }],
    teaches: [true],
    sends: 0,
  },
  {
    name: 'meeting → calendar checked → invitation edited',
    email: {
      id: 'm1',
      from: 'Ben <ben@customer.example>',
      to: 'sam@acme.dev',
      subject: 'Meeting next week?',
      body: 'Would you have 30 minutes for a call?',
    },
    // The invitation edited, then the short reply saying so accepted.
    answers: [{ type: 'edit', args: { start_time: '10:00' } }, { type: 'accept' }],
    teaches: [true, false],
    sends: 2,
  },
  {
    name: 'question → accept',
    email: {
      id: 'q1',
      from: 'Marco Rossi <marco@acme.dev>',
      to: 'sam@acme.dev',
      subject: 'API limits',
      body: 'What rate limit should the public API use?',
    },
    model: askingModel,
    answers: [{ type: 'response', args: '100 per minute' }, { type: 'accept' }],
    teaches: [false, false],
    sends: 1,
  },
];

/**
 * Runs a flow to its end in a process that dies at its `nth` write, then restarts it (a minute on)
 * and answers what waits as the human would, until the email is done.
 */
async function runFlow(flow: Flow, nth: number) {
  const store = createMemoryStore();
  const clock = new SimulatedClock(START);
  const id = flow.email.id as string;
  const dying = dyingAtWrite(store, nth);
  let current = withModel(dying.store, clock, flow.model?.());
  let restarts = 0;
  const restart = async () => {
    restarts += 1;
    clock.setNow(clock.now() + 60_000);
    current = withModel(store, clock, flow.model?.());
    await current.assistant.resume();
  };
  for (let guard = 0; guard < 20; guard += 1) {
    try {
      const record = await current.assistant.record(id);
      if (!record) {
        await current.assistant.receive(flow.email);
        continue;
      }
      if (record.state.value === 'done') break;
      const n = (record.answered ?? []).length;
      expect(record.interruptId, `${flow.name} at write ${nth}: waits on nothing`).toBeDefined();
      clock.setNow(clock.now() + 1000);
      await current.assistant.answer(record.interruptId as string, flow.answers[n]);
    } catch (error) {
      if ((error as Error).message !== 'the process died') throw error;
      await restart();
    }
  }
  return { store, dying, restarts, ...assistantOn(store, clock) };
}

describe('a stop at any write of an answer flow', () => {
  for (const flow of flows)
    it(`${flow.name}: after a restart, nothing is sent twice or learned twice, and every interrupt reads back answered`, async () => {
      const id = flow.email.id as string;
      const whole = await runFlow(flow, Number.POSITIVE_INFINITY);
      expect((await whole.assistant.record(id))?.state.value).toBe('done');
      expect(whole.restarts).toBe(0);
      let total = 0;
      for (let nth = 1; ; nth += 1) {
        const run = await runFlow(flow, nth);
        if (!run.dying.died()) {
          total = nth - 1;
          break;
        }
        const record = (await run.assistant.record(id)) as EmailRecord;
        const at = `${flow.name}, stopped at write ${nth}`;
        expect(record.state.value, at).toBe('done');
        expect(await run.assistant.pending(), at).toEqual([]);
        const sent = [...(await run.mailbox.sent()), ...(await run.calendar.events())];
        expect(sent.length, at).toBe(flow.sends);
        expect(
          record.answered?.map((e) => e.answer),
          at,
        ).toEqual(flow.answers);
        for (const [i, answer] of flow.answers.entries()) {
          const item = await run.assistant.interrupt(`${id}#${i + 1}`);
          expect(item?.status, at).toBe('answered');
          expect(item?.answer, at).toEqual(answer);
          expect(item?.id, at).toBe(`${id}#${i + 1}`);
        }
        for (const ns of namespaces) {
          const versions = await run.store.memory.history(ns, 'user_preferences', 100);
          for (const [i] of flow.answers.entries()) {
            const origin = `(inbox ${id}#${i + 1})`;
            expect(
              versions.filter((v) => v.source?.endsWith(origin)).length,
              `${at}: ${ns} ${origin}`,
            ).toBeLessThanOrEqual(1);
          }
        }
        for (const [i, teaches] of flow.teaches.entries()) {
          const origin = `(inbox ${id}#${i + 1})`;
          const all = (
            await Promise.all(namespaces.map((ns) => run.store.memory.history(ns, 'user_preferences', 100)))
          ).flat();
          expect(all.filter((v) => v.source?.endsWith(origin)).length, `${at}: learned from ${origin}`).toBe(
            teaches ? 1 : 0,
          );
          const item = await run.assistant.interrupt(`${id}#${i + 1}`);
          // The version it made, named even when the stop came between the memory's write and the record's.
          const made = all.find((v) => v.source?.endsWith(origin));
          if (teaches)
            expect(item?.memory, `${at}: ${origin} says what it taught`).toMatchObject({
              namespace: made?.namespace,
              version: made?.version,
              summary: expect.any(String),
            });
        }
      }
      expect(total).toBeGreaterThan(3);
    });
});

describe('interrupt ids a person may type or paste', () => {
  it('only the id as raised names an interrupt, pending or answered; any other spelling is unknown and changes nothing', async () => {
    const store = createMemoryStore();
    const { assistant } = assistantOn(store);
    await assistant.receive(statusUpdate);
    const odd = [
      's1',
      's1#',
      's1#0',
      's1#-1',
      's1#1.5',
      's1#01',
      's1#1 ',
      ' s1#1',
      's1# 1',
      's1#0x1',
      's1#1e0',
      's1#+1',
      '#1',
      '#',
      '',
    ];
    for (const id of odd) {
      expect(await assistant.interrupt(id), id).toBeUndefined();
      await expect(assistant.answer(id, { type: 'ignore' }), id).rejects.toThrow(
        `No interrupt ${id} in the inbox.`,
      );
    }
    expect((await assistant.pending()).map((i) => i.id)).toEqual(['s1#1']);
    await assistant.answer('s1#1', { type: 'ignore' });
    await expect(assistant.answer('s1#1', { type: 'ignore' })).rejects.toThrow(
      'Interrupt s1#1 was already answered (ignore).',
    );
    expect(await assistant.interrupt('s1#1')).toMatchObject({ id: 's1#1', status: 'answered' });
    // Number() reads all of these as 1: they must not name the answered s1#1.
    for (const id of odd) {
      expect(await assistant.interrupt(id), id).toBeUndefined();
      await expect(assistant.answer(id, { type: 'ignore' }), id).rejects.toThrow(
        `No interrupt ${id} in the inbox.`,
      );
    }
  });

  it('an email id holding “#”, unicode or 500 characters (the most an id may have) has interrupts answered and read back by their ids', async () => {
    const store = createMemoryStore();
    const { assistant, mailbox } = assistantOn(store);
    const ids = ['a#1', 'a', 'a#1#2', 'ünï—cödé#✉️', 'x'.repeat(500), `${'y'.repeat(497)}#7`];
    for (const id of ids)
      await assistant.receive({
        ...statusUpdate,
        id,
        subject: `Project Atlas status update ${id.slice(0, 20)}`,
      });
    expect((await assistant.pending()).map((i) => i.id).sort()).toEqual(ids.map((id) => `${id}#1`).sort());
    const tooLong = await assistant.receive({ ...statusUpdate, id: 'z'.repeat(501) });
    expect(tooLong).toMatchObject({ code: 'TROUPE_EMAIL_INVALID' });
    for (const id of ids) {
      const { item, record } = await assistant.answer(`${id}#1`, { type: 'response', args: 'thank them' });
      expect(item.id).toBe(`${id}#1`);
      expect(item.emailId).toBe(id);
      expect(record.interruptId).toBe(`${id}#2`);
    }
    for (const id of ids) {
      await assistant.answer(`${id}#2`, { type: 'accept' });
      const record = await assistant.record(id);
      expect(record?.state.value, id).toBe('done');
      expect(await assistant.interrupt(`${id}#1`), id).toMatchObject({
        emailId: id,
        status: 'answered',
        answer: { type: 'response', args: 'thank them' },
      });
      expect(await assistant.interrupt(`${id}#2`), id).toMatchObject({
        emailId: id,
        status: 'answered',
        answer: { type: 'accept' },
      });
      // The answer to a#1's interrupt (a#1#1) is not the email a's and the other way round.
      expect(await assistant.interrupt(`${id}#3`), id).toBeUndefined();
    }
    expect((await mailbox.sent()).length).toBe(ids.length);
    expect(await assistant.pending()).toEqual([]);
  });

  it('an interrupt an email no longer waits on, or one not raised yet, cannot be answered', async () => {
    const store = createMemoryStore();
    const { assistant, mailbox } = assistantOn(store);
    await assistant.receive(statusUpdate);
    await expect(assistant.answer('s1#2', { type: 'accept' })).rejects.toThrow(
      'No interrupt s1#2 in the inbox.',
    );
    await assistant.answer('s1#1', { type: 'response', args: 'thank Jordan' });
    // The email now waits on s1#2 (the draft); s1#1 was answered, s1#3 does not exist yet.
    await expect(assistant.answer('s1#1', { type: 'response', args: 'again' })).rejects.toThrow(
      'Interrupt s1#1 was already answered (response).',
    );
    await expect(assistant.answer('s1#3', { type: 'accept' })).rejects.toThrow(
      'No interrupt s1#3 in the inbox.',
    );
    expect((await assistant.record('s1'))?.interruptId).toBe('s1#2');
    expect(await mailbox.sent()).toEqual([]);
    await assistant.answer('s1#2', { type: 'accept' });
    expect((await mailbox.sent()).length).toBe(1);
  });
});

/** Two processes' stores on one place: the same memory store, or two connections to one SQLite file. */
const twoProcesses: [string, () => Promise<[TroupeStore, TroupeStore]>][] = [
  [
    'memory store',
    async () => {
      const store = createMemoryStore();
      return [store, store];
    },
  ],
  [
    'SQLite, two connections to one file',
    async () => {
      const path = join(await mkdtemp(join(tmpdir(), 'troupe-answers-')), 'troupe.db');
      return [await openSqliteStore({ path }), await openSqliteStore({ path })];
    },
  ],
];

describe('many answers to one interrupt at the same time, from two processes', () => {
  for (const [name, open] of twoProcesses)
    it(`${name}: one answer wins, the others are refused, one reply is sent and it is learned once`, async () => {
      const [one, two] = await open();
      const clock = new SimulatedClock(START);
      const a = assistantOn(one, clock);
      const b = assistantOn(two, clock);
      try {
        await a.assistant.receive(statusUpdate);
        const notify = await Promise.allSettled(
          Array.from({ length: 8 }, (_, i) =>
            (i % 2 === 0 ? a : b).assistant.answer('s1#1', { type: 'response', args: `thank Jordan (${i})` }),
          ),
        );
        expect(notify.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
        for (const r of notify)
          if (r.status === 'rejected') expect(r.reason).toMatchObject({ code: 'TROUPE_INBOX_INVALID' });
        const triage = await one.memory.history('email_assistant/triage_preferences', 'user_preferences', 50);
        expect(triage.filter((v) => v.source?.endsWith('(inbox s1#1)'))).toHaveLength(1);
        expect((await b.assistant.pending()).map((i) => i.id)).toEqual(['s1#2']);

        const edits = await Promise.allSettled(
          Array.from({ length: 8 }, (_, i) =>
            (i % 2 === 0 ? b : a).assistant.answer('s1#2', {
              type: 'edit',
              args: { content: `Hi Jordan, thanks (${i}). Sam` },
            }),
          ),
        );
        const won = edits.filter((r) => r.status === 'fulfilled');
        expect(won).toHaveLength(1);
        for (const r of edits)
          if (r.status === 'rejected') expect(r.reason).toMatchObject({ code: 'TROUPE_INBOX_INVALID' });
        const sent = await a.mailbox.sent();
        expect(sent).toHaveLength(1);
        const record = await b.assistant.record('s1');
        expect(record?.state.value).toBe('done');
        // The reply sent is the winning edit, and the record says so.
        const winner = record?.answered?.[1]?.answer;
        expect(winner?.type).toBe('edit');
        expect(sent[0]?.content).toBe((winner as { args: { content: string } }).args.content);
        const response = await two.memory.history(
          'email_assistant/response_preferences',
          'user_preferences',
          50,
        );
        expect(response.filter((v) => v.source?.endsWith('(inbox s1#2)'))).toHaveLength(1);
        expect(await a.assistant.interrupt('s1#2')).toMatchObject({ status: 'answered', answer: winner });
        expect(await a.assistant.pending()).toEqual([]);
      } finally {
        await one.close();
        if (two !== one) await two.close();
      }
    });
});

describe('an answer stored by a process that stopped, carried through by two at once', () => {
  for (const [name, open] of twoProcesses)
    it(`${name}: it is learned once, the draft is raised once, and nothing is sent twice`, async () => {
      const [one, two] = await open();
      const clock = new SimulatedClock(START);
      try {
        await assistantOn(one, clock).assistant.receive(statusUpdate);
        // The answer is stored (write 1); the process stops at the memory update (write 2).
        const dying = dyingAtWrite(one, 2);
        await expect(
          assistantOn(dying.store, clock).assistant.answer('s1#1', {
            type: 'response',
            args: 'thank Jordan',
          }),
        ).rejects.toThrow('the process died');
        clock.setNow(clock.now() + 60_000);
        const a = assistantOn(one, clock);
        const b = assistantOn(two, clock);
        await Promise.all([a.assistant.resume(), b.assistant.resume(), a.assistant.resume()]);
        const triage = await two.memory.history('email_assistant/triage_preferences', 'user_preferences', 50);
        expect(triage.filter((v) => v.source?.endsWith('(inbox s1#1)'))).toHaveLength(1);
        expect((await a.assistant.pending()).map((i) => i.id)).toEqual(['s1#2']);
        const record = await b.assistant.record('s1');
        expect(record?.interruptId).toBe('s1#2');
        expect(await a.assistant.interrupt('s1#1')).toMatchObject({
          status: 'answered',
          answer: { type: 'response', args: 'thank Jordan' },
        });
        await b.assistant.answer('s1#2', { type: 'accept' });
        await Promise.all([a.assistant.resume(), b.assistant.resume()]);
        expect(await a.mailbox.sent()).toHaveLength(1);
        expect((await a.assistant.record('s1'))?.state.value).toBe('done');
      } finally {
        await one.close();
        if (two !== one) await two.close();
      }
    });
});

const longBody = (text: string) => `${text} ${'More detail follows here. '.repeat(12)}`;

/** A model that triages as respond and fails drafting for good. */
function failingModel(): ObjectModel & AgentModel {
  return {
    id: 'test:failing',
    async generateObject<Schema extends z.ZodType>(request: ObjectRequest<Schema>) {
      if (request.schemaName === 'triage_decision')
        return { reasoning: 'needs a reply', classification: 'respond' } as z.output<Schema>;
      throw new TroupeError('TROUPE_MODEL_FAILED', 'the model refused', { retryable: false });
    },
    async nextToolCall() {
      throw new TroupeError('TROUPE_MODEL_FAILED', 'the model refused', { retryable: false });
    },
  };
}

interface Finished {
  name: string;
  email: Record<string, unknown>;
  answers: HumanResponse[];
  model?: () => ObjectModel & AgentModel;
  outcome: string;
}

const finished: Finished[] = [
  {
    name: 'ignored',
    email: {
      id: 'n1',
      from: 'The Weekly Byte <newsletter@bytes.example>',
      to: 'sam@acme.dev',
      subject: 'This week in JavaScript',
      body: longBody('Top stories.'),
    },
    answers: [],
    outcome: 'done',
  },
  {
    name: 'notified',
    email: { ...statusUpdate, body: longBody(statusUpdate.body), labels: ['INBOX'] },
    answers: [{ type: 'ignore' }],
    outcome: 'done',
  },
  {
    name: 'answered via send (with an edit and feedback on the way)',
    email: {
      id: 'q1',
      threadId: 'th-q1',
      messageId: '<q1@mail.acme.dev>',
      references: '<root@mail.acme.dev>',
      from: 'Marco Rossi <marco@acme.dev>',
      to: 'sam@acme.dev',
      subject: 'API limits',
      body: longBody('What rate limit should the public API use?'),
    },
    answers: [
      { type: 'response', args: 'say 100 per minute' },
      { type: 'edit', args: { subject: 'Re: API limits (100/min)' } },
    ],
    outcome: 'done',
  },
  {
    name: 'meeting scheduled',
    email: {
      id: 'm1',
      from: 'Ben <ben@customer.example>',
      to: 'sam@acme.dev',
      subject: 'Meeting next week?',
      body: longBody('Would you have 30 minutes for a call?'),
    },
    // The invitation, then the short reply saying it was sent.
    answers: [{ type: 'accept' }, { type: 'accept' }],
    outcome: 'done',
  },
  {
    name: 'question asked, then the reply accepted',
    email: {
      id: 'q2',
      from: 'Marco Rossi <marco@acme.dev>',
      to: 'sam@acme.dev',
      subject: 'API limits',
      body: longBody('What rate limit should the public API use?'),
    },
    model: askingModel,
    answers: [{ type: 'response', args: '100 per minute' }, { type: 'accept' }],
    outcome: 'done',
  },
  {
    name: 'failed',
    email: {
      id: 'f1',
      from: 'Marco Rossi <marco@acme.dev>',
      to: 'sam@acme.dev',
      subject: 'API limits',
      body: longBody('What rate limit should the public API use?'),
    },
    model: failingModel,
    answers: [],
    outcome: 'failed',
  },
];

/**
 * What a finished record keeps of the record the assistant had: the body cut, steps without
 * results, answers placed in the history only when accepted, reasoning once; a failed one keeps
 * its body and steps whole (a retry reads them).
 */
function kept(record: EmailRecord): EmailRecord {
  const failed = record.state.value === 'failed';
  const { agentSteps: _steps, unreviewed: _unreviewed, ...rest } = record;
  return {
    ...rest,
    email: failed ? record.email : { ...record.email, body: record.email.body.slice(0, KEPT_BODY) },
    steps: failed ? record.steps : record.steps.map((s) => ({ call: s.call })),
    ...(record.answered
      ? {
          answered: record.answered.map(({ step, ...entry }) =>
            failed || entry.answer.type === 'accept'
              ? { ...entry, ...(step === undefined ? {} : { step }) }
              : entry,
          ),
        }
      : {}),
    state: {
      value: record.state.value,
      context: record.decision ? { ...record.state.context, reasoning: null } : record.state.context,
    },
  };
}

describe('a finished email read back from its compacted record', () => {
  for (const kind of finished)
    it(`${kind.name}: record() gives what the assistant returned, and each interrupt what the inbox showed`, async () => {
      const store = createMemoryStore();
      const clock = new SimulatedClock(START);
      const { assistant } = withModel(store, clock, kind.model?.());
      const id = kind.email.id as string;
      let last = (await assistant.receive(kind.email)) as EmailRecord;
      expect(last).not.toBeInstanceOf(TroupeError);
      const shown: InboxItem[] = [];
      for (const answer of kind.answers) {
        const [item] = await assistant.pending();
        expect(item?.emailId).toBe(id);
        shown.push(item as InboxItem);
        clock.setNow(clock.now() + 30_000);
        const done = await assistant.answer(item?.id as string, answer);
        last = done.record;
      }
      expect(last.state.value).toBe(kind.outcome);
      expect(await assistant.pending()).toEqual([]);
      const read = await assistant.record(id);
      const { stored: _a, ...readBack } = read as EmailRecord;
      const { stored: _b, ...returned } = kept(last);
      expect(readBack).toEqual(returned);
      // Written again as read (a record read then saved, say by another process), it reads the same.
      const body = kind.email.body as string;
      expect(read?.email.body).toBe(kind.outcome === 'failed' ? body : body.slice(0, KEPT_BODY));
      for (const [i, item] of shown.entries()) {
        const answered = await assistant.interrupt(item.id);
        const [heading, headers] = item.request.description.split('\n\n');
        // The item as shown, but for the description (heading and headers) and how it was answered.
        const { memory: _taught, answeredAt, ...rest } = answered as InboxItem;
        expect(answeredAt).toBeGreaterThan(item.createdAt);
        expect(rest).toEqual({
          ...item,
          request: { ...item.request, description: `${heading}\n\n${headers}` },
          status: 'answered',
          answer: kind.answers[i],
        });
      }
    });
});

/**
 * A store as the previous build left it (written by it, see the fixture): answered interrupts in
 * their own collection (`email-inbox-answered`), records waiting without `askedAt`, a finished one
 * stored with `compacted: true` and its whole context, and q3, whose edit that build stored and
 * learned from (and sent) before it stopped, its record still waiting on q3#1.
 */
async function previousBuildStore(): Promise<{ store: TroupeStore; now: number; fixture: PreviousBuild }> {
  const fixture = JSON.parse(
    await readFile(new URL('../fixtures/email-previous-build.json', import.meta.url), 'utf8'),
  ) as PreviousBuild;
  const store = createMemoryStore();
  for (const [collection, docs] of Object.entries(fixture.documents))
    for (const [key, value] of Object.entries(docs)) await store.documents.put(collection, key, value);
  for (const [namespace, versions] of Object.entries(fixture.memory))
    for (const v of versions)
      await store.memory.put(namespace, 'user_preferences', v.value, { at: v.at, source: v.source });
  return { store, now: fixture.now, fixture };
}

interface PreviousBuild {
  now: number;
  documents: Record<string, Record<string, Record<string, unknown>>>;
  memory: Record<string, { value: unknown; at: number; source: string }[]>;
}

describe('a store written by the previous build', () => {
  it('an answered interrupt an earlier build also left pending (it wrote the two apart) leaves the inbox when carried through', async () => {
    const { store, now, fixture } = await previousBuildStore();
    const answered = fixture.documents['email-inbox-answered']?.['q3#1'] as unknown as InboxItem;
    await store.documents.put('email-inbox', 'q3#1', { ...answered, status: 'pending' });
    const { assistant } = assistantOn(store, new SimulatedClock(now + 60_000));
    await expect(assistant.answer('q3#1', { type: 'accept' })).rejects.toThrow(
      'Interrupt q3#1 was already answered (edit).',
    );
    await assistant.resume();
    expect((await assistant.record('q3'))?.state.value).toBe('done');
    expect((await assistant.pending()).map((i) => i.id)).toEqual(['q1#1', 's2#1']);
  });

  it('its finished emails and answered interrupts read back; an answer it stored but did not carry through is carried through once', async () => {
    const { store, now, fixture } = await previousBuildStore();
    const clock = new SimulatedClock(now + 60_000);
    const { assistant, mailbox } = assistantOn(store, clock);
    const s1 = await assistant.record('s1');
    expect(s1?.state.value).toBe('done');
    expect(s1?.state.context).toMatchObject({
      emailId: 's1',
      outcome: 'answered',
      feedback: ['tell Jordan thanks'],
    });
    const old = fixture.documents['email-inbox-answered'] as Record<
      string,
      InboxItem & Record<string, unknown>
    >;
    // Answered interrupts read back as that build kept them.
    for (const id of ['s1#1', 's1#2']) expect(await assistant.interrupt(id)).toEqual(old[id]);
    await expect(assistant.answer('s1#1', { type: 'ignore' })).rejects.toThrow(
      'Interrupt s1#1 was already answered (response).',
    );
    expect((await assistant.pending()).map((i) => i.id)).toEqual(['q1#1', 's2#1']);

    // q3's edit was stored (and learned from, and sent) before that build stopped.
    const sentBefore = (await mailbox.sent()).length;
    await assistant.resume();
    const q3 = await assistant.record('q3');
    expect(q3?.state.value).toBe('done');
    expect(await mailbox.sent()).toHaveLength(sentBefore);
    const learned = await store.memory.history(
      'email_assistant/response_preferences',
      'user_preferences',
      50,
    );
    expect(learned.filter((v) => v.source?.endsWith('(inbox q3#1)'))).toHaveLength(1);
    expect(await assistant.interrupt('q3#1')).toMatchObject({ status: 'answered', answer: { type: 'edit' } });
    await expect(assistant.answer('q3#1', { type: 'accept' })).rejects.toThrow(
      'Interrupt q3#1 was already answered (edit).',
    );

    // What waited is answered as ever, and reads back with the time it was raised.
    const pendingQ1 = fixture.documents['email-inbox']?.['q1#1'] as unknown as InboxItem;
    const { record: q1 } = await assistant.answer('q1#1', { type: 'accept' });
    expect(q1.state.value).toBe('done');
    expect(await assistant.interrupt('q1#1')).toMatchObject({
      status: 'answered',
      answer: { type: 'accept' },
      createdAt: pendingQ1.createdAt,
      request: { action_request: pendingQ1.request.action_request },
    });
    const { record: s2, item } = await assistant.answer('s2#1', { type: 'ignore' });
    expect(s2.state.context.outcome).toBe('notified');
    expect(item.memory?.namespace).toBe('email_assistant/triage_preferences');
    expect(await assistant.pending()).toEqual([]);
    expect(await mailbox.sent()).toHaveLength(sentBefore + 1);
  });
});

describe('troupe inbox show and answer, on ids as people type them', () => {
  it('an id not exactly as raised is unknown; an answered one is shown with its call and refused again', async () => {
    const env = {
      TROUPE_DATA_DIR: await mkdtemp(join(tmpdir(), 'troupe-answers-cli-')),
      TROUPE_EMAIL_NOW: '2026-11-25T09:00:00Z',
      TROUPE_EMAIL_TIME_ZONE: 'Europe/Berlin',
      LOG_LEVEL: 'silent',
    };
    expect((await runTroupe(['email'], env)).code).toBe(0);
    for (const id of [
      'sample-02#01',
      'sample-02#1 ',
      'sample-02# 1',
      'sample-02#1e0',
      'sample-02',
      'sample-02#0',
    ]) {
      const shown = await runTroupe(['inbox', 'show', id], env);
      expect(shown.code, id).toBe(2);
      expect(shown.stderr, id).toContain(`error TROUPE_INBOX_INVALID: No interrupt ${id} in the inbox`);
    }
    const odd = await runTroupe(['inbox', 'answer', 'sample-02#01', 'ignore'], env);
    expect(odd.code).toBe(2);
    expect(odd.stderr).toContain('error TROUPE_INBOX_INVALID: No interrupt sample-02#01 in the inbox.');
    // An escape code in an id is not written to the terminal.
    const escaped = await runTroupe(['inbox', 'show', 'sample-02\u001b[2J#1'], env);
    expect(escaped.code).toBe(2);
    expect(escaped.stderr).not.toContain('\u001b');

    expect((await runTroupe(['inbox', 'answer', 'sample-02#1', 'ignore'], env)).code).toBe(0);
    const again = await runTroupe(['inbox', 'answer', 'sample-02#1', 'response', 'reply after all'], env);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain(
      'error TROUPE_INBOX_INVALID: Interrupt sample-02#1 was already answered (ignore).',
    );
    const notify = await runTroupe(['inbox', 'show', 'sample-02#1'], env);
    expect(notify.stdout).toContain('sample-02#1 — Email Assistant: notify — answered');
    expect(notify.stdout).toContain('Answered with ignore.');
    expect(notify.stdout).not.toContain('# Proposed');
    expect((await runTroupe(['inbox', 'show', 'sample-02#01'], env)).code).toBe(2);

    // An accepted invitation: once the email is done its arguments are kept in its step only.
    const booked = await runTroupe(['inbox', 'answer', 'sample-04#1', 'accept'], env);
    expect(booked.stdout).toMatch(/waiting for you \(sample-04#2\)/u);
    // Then the short reply saying the invitation went out.
    const replied = await runTroupe(['inbox', 'answer', 'sample-04#2', 'accept'], env);
    expect(replied.stdout).toContain('now: done — answered');
    const meeting = await runTroupe(['inbox', 'show', 'sample-04#1'], env);
    expect(meeting.stdout).toContain('sample-04#1 — schedule_meeting_tool — answered');
    expect(meeting.stdout).toMatch(
      /# Proposed: schedule_meeting_tool\n[\s\S]*\*\*attendees\*\*: \["ben@customer\.example"\][\s\S]*\*\*start_time\*\*: 09:00[\s\S]*Answered with accept\./u,
    );
  });
});

describe('what an answer may carry into the email’s record', () => {
  it('an accept or ignore with arguments attached (Agent Inbox sends the call back) is kept without them', async () => {
    const store = createMemoryStore();
    const { assistant, mailbox } = assistantOn(store);
    await assistant.receive(statusUpdate);
    const junk = { action: 'Email Assistant: notify', args: { blob: 'x'.repeat(1_000_000) } };
    const { item } = await assistant.answer('s1#1', { type: 'response', args: 'thank Jordan' });
    expect(item.answer).toEqual({ type: 'response', args: 'thank Jordan' });
    await assistant.answer('s1#2', { type: 'accept', args: junk });
    expect(await mailbox.sent()).toHaveLength(1);
    const stored = await store.documents.get('email-lifecycle', 's1');
    expect(JSON.stringify(stored?.value).length).toBeLessThan(5_000);
    expect((await assistant.interrupt('s1#2'))?.answer).toEqual({ type: 'accept' });

    await assistant.receive({ ...statusUpdate, id: 's2', from: 'Lee <lee@acme.dev>' });
    await assistant.answer('s2#1', { type: 'ignore', args: junk });
    expect(JSON.stringify((await store.documents.get('email-lifecycle', 's2'))?.value).length).toBeLessThan(
      5_000,
    );
    expect((await assistant.interrupt('s2#1'))?.answer).toEqual({ type: 'ignore' });
  });

  it('an edit is kept as the fields it changes, however it was sent (a padded JSON string, the Agent Inbox wrapper)', async () => {
    const store = createMemoryStore();
    const { assistant, mailbox } = assistantOn(store);
    await assistant.receive(statusUpdate);
    await assistant.answer('s1#1', { type: 'response', args: 'thank Jordan' });
    const padded = `{"action": "${'x'.repeat(500_000)}", "args": {"subject": "Re: Atlas", "to": "jordan@acme.dev"${' '.repeat(500_000)}}}`;
    const { item } = await assistant.answer('s1#2', { type: 'edit', args: padded });
    expect(item.answer).toEqual({ type: 'edit', args: { subject: 'Re: Atlas' } });
    const [sent] = await mailbox.sent();
    expect(sent?.subject).toBe('Re: Atlas');
    expect(sent?.to).toBe('jordan@acme.dev');
    expect(JSON.stringify((await store.documents.get('email-lifecycle', 's1'))?.value).length).toBeLessThan(
      5_000,
    );
  });
});
