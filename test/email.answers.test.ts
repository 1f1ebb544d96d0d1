import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { SimulatedClock } from '../src/actors/clock.js';
import { EmailAssistant, type EmailRecord } from '../src/actors/emailAssistant.js';
import { createLocalCalendar, createLocalMailbox } from '../src/adapters/mail/localMailbox.js';
import { createMemoryStore } from '../src/adapters/store/memoryStore.js';
import type { HumanResponse } from '../src/email/agentInbox.js';
import type { ObjectModel, ObjectRequest } from '../src/ports/objectModel.js';
import type { TroupeStore } from '../src/ports/store.js';

// The human-in-the-loop answer flow, attacked as a hostile user or operator would: odd interrupt
// ids, answers at the same time, stops at every write, and records read back after compaction.

const START = Date.parse('2026-11-25T09:00:00Z');

function assistantOn(store: TroupeStore, clock = new SimulatedClock(START), model?: ObjectModel) {
  const mailbox = createLocalMailbox(store.documents, { now: () => clock.now() });
  const calendar = createLocalCalendar(store.documents);
  const assistant = new EmailAssistant({
    store,
    mailbox,
    calendar,
    clock,
    userName: 'Sam',
    timeZone: 'Europe/Berlin',
    ...(model ? { model } : {}),
  });
  return { assistant, mailbox, calendar, clock };
}

const statusUpdate = {
  id: 's1',
  from: 'Jordan <jordan@acme.dev>',
  to: 'sam@acme.dev',
  subject: 'Project Atlas status update',
  body: 'FYI: Atlas is on track. No action items.',
};

/** A model that triages as respond, asks the human first, then drafts a reply, then is done. */
function askingModel(): ObjectModel {
  return {
    id: 'test:asking',
    async generateObject<Schema extends z.ZodType>(request: ObjectRequest<Schema>) {
      if (request.schemaName === 'triage_decision')
        return { reasoning: 'a question for Sam', classification: 'respond' } as z.output<Schema>;
      if (request.schemaName !== 'tool_call') throw new Error('no preference updates in this test');
      const text = request.prompt.messages.map((m) => m.content).join('\n');
      if (text.includes('send_email_tool('))
        return { call: { tool: 'Done', args: { done: true } } } as z.output<Schema>;
      if (text.includes('100 per minute'))
        return {
          call: {
            tool: 'send_email_tool',
            args: { to: 'marco@acme.dev', subject: 'Re: API limits', content: 'Hi Marco, 100 per minute.' },
          },
        } as z.output<Schema>;
      return {
        call: { tool: 'Question', args: { content: 'Which limit does finance want?' } },
      } as z.output<Schema>;
    },
  };
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

interface Flow {
  name: string;
  email: Record<string, unknown>;
  answers: HumanResponse[];
  model?: () => ObjectModel;
  /** Which answers teach a memory version. */
  teaches: boolean[];
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
  },
  {
    name: 'notify → respond → accept',
    email: statusUpdate,
    answers: [{ type: 'response', args: 'tell Jordan thanks' }, { type: 'accept' }],
    teaches: [true, false],
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
  let current = assistantOn(dying.store, clock, flow.model?.());
  let restarts = 0;
  const restart = async () => {
    restarts += 1;
    clock.setNow(clock.now() + 60_000);
    current = assistantOn(store, clock, flow.model?.());
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
  return {
    store,
    clock,
    dying,
    restarts,
    assistant: assistantOn(store, clock).assistant,
    mailbox: current.mailbox,
  };
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
        const sent = await run.mailbox.sent();
        expect(sent.length, at).toBe(1);
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
        for (const ns of ['email_assistant/triage_preferences', 'email_assistant/response_preferences']) {
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
          const all = [
            ...(await run.store.memory.history(
              'email_assistant/triage_preferences',
              'user_preferences',
              100,
            )),
            ...(await run.store.memory.history(
              'email_assistant/response_preferences',
              'user_preferences',
              100,
            )),
          ];
          expect(all.filter((v) => v.source?.endsWith(origin)).length, `${at}: learned from ${origin}`).toBe(
            teaches ? 1 : 0,
          );
          const item = await run.assistant.interrupt(`${id}#${i + 1}`);
          if (teaches) expect(item?.memory, `${at}: ${origin} says what it taught`).toBeDefined();
        }
      }
      expect(total).toBeGreaterThan(3);
    });
});
