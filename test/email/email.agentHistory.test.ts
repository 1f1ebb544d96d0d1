import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SimulatedClock } from '../../src/actors/clock.js';
import { EmailAssistant } from '../../src/actors/email/emailAssistant.js';
import type { EmailRecord } from '../../src/actors/email/emailRecord.js';
import { createAiSdkAgentModel } from '../../src/adapters/llm/aiSdkAgentModel.js';
import { createAiSdkObjectModel } from '../../src/adapters/llm/aiSdkObjectModel.js';
import { createMemoryStore } from '../../src/adapters/store/memory/memoryStore.js';
import type { AgentModel } from '../../src/ports/agentModel.js';
import type { TroupeStore } from '../../src/ports/store.js';
import { assistantOn, EMAIL_START } from '../support/emailHarness.js';
import { startFakeGoogle } from '../support/fakeGoogle.js';
import {
  type ChatRequestBody,
  type FakeOpenAiServer,
  startFakeOpenAiServer,
} from '../support/fakeOpenAiServer.js';
import { openTestAccount } from '../support/gmailTestAccount.js';

let fake: FakeOpenAiServer;
let store: TroupeStore;
beforeEach(async () => {
  fake = await startFakeOpenAiServer();
  store = createMemoryStore();
});
afterEach(async () => {
  await fake.close();
});

/** The real AI SDK against the fake server: triage (structured output) and the agent (tool calls). */
function models(server: FakeOpenAiServer) {
  const language = createOpenAICompatible({
    name: 'openai-compatible',
    baseURL: server.baseUrl,
    supportsStructuredOutputs: true,
  }).chatModel('fake-agent');
  const id = 'openai-compatible:fake-agent';
  return {
    model: createAiSdkObjectModel({ model: language, id, maxRetries: 0 }),
    agentModel: createAiSdkAgentModel({ model: language, id, maxRetries: 0 }),
  };
}

function assistant(extra: Parameters<typeof assistantOn>[3] = {}, clock = new SimulatedClock(EMAIL_START)) {
  const { model, agentModel } = models(fake);
  return assistantOn(store, clock, model, { agentModel, ...extra });
}

/** The agent's requests (those that offer tools), in order. */
const agentRequests = () => fake.chatRequests().filter((r) => r.tools !== undefined);
type Message = ChatRequestBody['messages'][number];
type ToolCall = { id: string; function: { name: string; arguments: string } };
const callsOf = (m: Message) => (m.tool_calls ?? []) as ToolCall[];

/** The tool message that answers the assistant's call of `tool` (the last one), and that call. */
function answerTo(request: ChatRequestBody, tool: string): { call: ToolCall; result: string } {
  const call = request.messages.flatMap(callsOf).findLast((c) => c.function.name === tool);
  if (!call) throw new Error(`no ${tool} call in the request`);
  const result = request.messages.find((m) => m.role === 'tool' && m.tool_call_id === call.id);
  return { call, result: String(result?.content ?? '') };
}

/** The memory update an answer asks for: refused here (the email goes on without it). */
const noMemory = { status: 400, message: 'no memory updates in this test' };
const respond = { json: { reasoning: 'It needs an answer.', classification: 'respond' } };
const call = (name: string, args: unknown) => ({ toolCalls: [{ name, arguments: args }] });
const meeting = {
  id: 'm1',
  from: 'Ben <ben@customer.example>',
  to: 'sam@acme.dev',
  subject: 'Meeting next week?',
  body: 'Would you have 30 minutes for a call on Monday?',
};
const question = {
  id: 'q1',
  from: 'Marco <marco@acme.dev>',
  to: 'sam@acme.dev',
  subject: 'API limits',
  body: 'What rate limit should the public API use?',
};
const draft = {
  to: 'marco@acme.dev',
  subject: 'Re: API limits',
  content:
    'Hi Marco,\n\nThanks for asking. I think we should use 100 requests per minute per key, with bursts.\n\nBest,\nSam',
};

describe('the response agent sees its own history (real AI SDK, OpenAI-compatible fake)', () => {
  it('each step is a tool call over the messages: the email as untrusted data, then the calendar check with the slots found', async () => {
    const { assistant: a } = assistant();
    fake.enqueue(
      respond,
      call('check_calendar_availability_tool', { day: '2026-11-30', time_zone: 'Europe/Berlin' }),
      call('schedule_meeting_tool', {
        attendees: ['ben@customer.example'],
        subject: 'Call',
        duration_minutes: 30,
        preferred_day: '2026-11-30',
        start_time: '10:00',
        time_zone: 'Europe/Berlin',
      }),
    );
    const record = (await a.receive(meeting)) as EmailRecord;
    expect(record.state.value).toEqual({ responding: 'reviewing' });
    const [first, second] = agentRequests();
    expect(first?.tool_choice).toBe('required');
    expect(first?.tools?.map((t) => t.function.name).sort()).toEqual([
      'Done',
      'Question',
      'check_calendar_availability_tool',
      'schedule_meeting_tool',
      'send_email_tool',
    ]);
    expect(first?.messages.map((m) => m.role)).toEqual(['system', 'user']);
    expect(String(first?.messages[1]?.content)).toMatch(/untrusted data from outside[\s\S]*30 minutes/u);
    expect(String(first?.messages[0]?.content)).toContain('once the meeting is booked, write a short reply');
    // The second step sees the check it made, and what the calendar said.
    expect(second?.messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool']);
    const { call: check, result } = answerTo(second as ChatRequestBody, 'check_calendar_availability_tool');
    expect(JSON.parse(check.function.arguments)).toEqual({ day: '2026-11-30', time_zone: 'Europe/Berlin' });
    expect(JSON.parse(result)).toMatchObject({ day: '2026-11-30', free: [{ start: '09:00', end: '17:00' }] });
    expect(JSON.stringify(second)).not.toContain('No calls made yet');
  });

  it('a rejected draft is shown with the person’s feedback as its result ("make it shorter" has something to act on)', async () => {
    const { assistant: a } = assistant();
    fake.enqueue(respond, call('send_email_tool', draft));
    await a.receive(question);
    fake.enqueue(noMemory, call('send_email_tool', { ...draft, content: 'Hi Marco, 100 per minute. Sam' }));
    await a.answer('q1#1', { type: 'response', args: 'make it shorter' });
    const after = agentRequests().at(-1) as ChatRequestBody;
    const { call: rejected, result } = answerTo(after, 'send_email_tool');
    expect(JSON.parse(rejected.function.arguments).content).toBe(draft.content);
    expect(result).toContain('Not sent: the user rejected this draft.');
    expect(result).toContain('make it shorter');
    // Attached to that call, not loose text elsewhere.
    const loose = after.messages.filter(
      (m) => m.role !== 'tool' && JSON.stringify(m.content).includes('make it shorter'),
    );
    expect(loose).toEqual([]);
    expect(await a.pendingFor('q1')).toMatchObject([{ id: 'q1#2' }]);
  });

  it('an edited draft is shown as edited: the call as it was carried out, with its result', async () => {
    const { assistant: a, mailbox } = assistant();
    fake.enqueue(respond, call('send_email_tool', draft));
    await a.receive(question);
    fake.enqueue(noMemory, call('Done', { done: true }));
    await a.answer('q1#1', { type: 'edit', args: { content: 'Hi Marco, 50 per minute. Sam' } });
    const after = agentRequests().at(-1) as ChatRequestBody;
    const { call: sent, result } = answerTo(after, 'send_email_tool');
    expect(JSON.parse(sent.function.arguments).content).toBe('Hi Marco, 50 per minute. Sam');
    expect(result).toContain('The user edited this call before it was carried out');
    expect(JSON.parse(result).result.messageId).toBe((await mailbox.sent())[0]?.messageId);
    expect((await a.record('q1'))?.state.value).toBe('done');
  });

  it('a Question answered: the answer is that call’s result, and nothing says no calls were made', async () => {
    const { assistant: a } = assistant();
    fake.enqueue(respond, call('Question', { content: 'Which limit does finance want?' }));
    await a.receive(question);
    fake.enqueue(call('send_email_tool', draft));
    await a.answer('q1#1', { type: 'response', args: '100 per minute per key' });
    const after = agentRequests().at(-1) as ChatRequestBody;
    const { call: asked, result } = answerTo(after, 'Question');
    expect(JSON.parse(asked.function.arguments)).toEqual({ content: 'Which limit does finance want?' });
    expect(result).toBe('The user answered: 100 per minute per key');
    expect(JSON.stringify(after)).not.toContain('No calls made yet');
    expect(after.messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool']);
  });

  it('the history is written again from the stored record: a restart sends the same messages', async () => {
    const clock = new SimulatedClock(EMAIL_START);
    const first = assistant({}, clock).assistant;
    fake.enqueue(respond, call('send_email_tool', draft));
    await first.receive(question);
    fake.enqueue(noMemory, call('send_email_tool', { ...draft, content: 'Short. Sam' }));
    await first.answer('q1#1', { type: 'response', args: 'make it shorter' });
    const before = agentRequests().at(-1);
    // Another process on the same store, answering the second draft with feedback again.
    const second = assistant({}, clock).assistant;
    fake.enqueue(noMemory, call('Done', { done: true }));
    await second.answer('q1#2', { type: 'response', args: 'say thanks' });
    const after = agentRequests().at(-1) as ChatRequestBody;
    expect(after.messages.slice(0, before?.messages.length)).toEqual(before?.messages);
    expect(answerTo(after, 'send_email_tool').result).toContain('say thanks');
  });
});

describe('one email never stalls the others', () => {
  it('a model that keeps checking the calendar: the email fails with a reason after 3 checks, and the next email is handled', async () => {
    const { assistant: a } = assistant();
    fake.enqueue(respond);
    fake.respondWith(() =>
      call('check_calendar_availability_tool', { day: '2026-11-30', time_zone: 'Europe/Berlin' }),
    );
    const record = (await a.receive(meeting)) as EmailRecord;
    expect(record.state.value).toBe('failed');
    expect(record.state.context.error).toMatchObject({
      code: 'TROUPE_EMAIL_AGENT_LIMIT',
      message: expect.stringContaining('TROUPE_EMAIL_MAX_UNREVIEWED_CALLS'),
    });
    expect(agentRequests()).toHaveLength(4);
    expect(await a.failed()).toEqual([
      expect.objectContaining({
        emailId: 'm1',
        error: expect.objectContaining({ code: 'TROUPE_EMAIL_AGENT_LIMIT' }),
      }),
    ]);
    fake.reset();
    fake.enqueue(respond, call('send_email_tool', draft));
    expect(((await a.receive(question)) as EmailRecord).state.value).toEqual({ responding: 'reviewing' });
  });

  it('at most TROUPE_EMAIL_MAX_STEPS model steps per email', async () => {
    const { assistant: a } = assistant({ maxSteps: 2, maxUnreviewedCalls: 10 });
    fake.enqueue(respond);
    for (let i = 0; i < 5; i += 1)
      fake.enqueue(
        call('check_calendar_availability_tool', { day: '2026-11-30', time_zone: 'Europe/Berlin' }),
      );
    const record = (await a.receive(meeting)) as EmailRecord;
    expect(record.state.value).toBe('failed');
    expect(record.state.context.error?.message).toContain('TROUPE_EMAIL_MAX_STEPS');
    expect(agentRequests()).toHaveLength(2);
  });

  it('a model error after its retries, or an answer that is not one valid tool call, fails the email with the reason', async () => {
    const { assistant: a } = assistant();
    fake.enqueue(respond, { status: 400, message: 'bad request' });
    const refused = (await a.receive(question)) as EmailRecord;
    expect(refused.state.value).toBe('failed');
    expect(refused.state.context.error?.code).toBe('TROUPE_MODEL_FAILED');
    fake.enqueue(respond, call('send_email_tool', { to: 'marco@acme.dev' }));
    const bad = (await a.receive({ ...question, id: 'q2' })) as EmailRecord;
    expect(bad.state.value).toBe('failed');
    expect(bad.state.context.error?.message).toMatch(/send_email_tool/u);
    fake.enqueue(respond, { text: 'I would rather chat.' });
    const chat = (await a.receive({ ...question, id: 'q3' })) as EmailRecord;
    expect(chat.state.value).toBe('failed');
    expect(chat.state.context.error?.message).toMatch(/tool call/u);
  });

  it('of several tool calls in one answer (parallel calls), the first is taken and the next step sees only it', async () => {
    const { assistant: a } = assistant();
    fake.enqueue(respond, {
      toolCalls: [
        { name: 'check_calendar_availability_tool', arguments: { day: '2026-11-30', time_zone: 'UTC' } },
        { name: 'check_calendar_availability_tool', arguments: { day: '2026-12-01', time_zone: 'UTC' } },
      ],
    });
    fake.enqueue(call('Question', { content: 'Which day suits you?' }));
    const record = (await a.receive(meeting)) as EmailRecord;
    expect(record.state.value).toEqual({ responding: 'reviewing' });
    const second = agentRequests()[1] as ChatRequestBody;
    const checks = second.messages.flatMap(callsOf).map((c) => JSON.parse(c.function.arguments).day);
    expect(checks).toEqual(['2026-11-30']);
  });

  it('a loop that never waits nor finishes (bounds set high) fails the email instead of throwing', async () => {
    const looping: AgentModel = {
      id: 'test:looping',
      async nextToolCall() {
        return {
          toolCallId: 'x',
          toolName: 'check_calendar_availability_tool',
          input: { day: '2026-11-30', time_zone: 'Europe/Berlin' },
        };
      },
    };
    const { assistant: a } = assistantOn(store, new SimulatedClock(EMAIL_START), undefined, {
      agentModel: looping,
      maxSteps: 100,
      maxUnreviewedCalls: 50,
    });
    const record = (await a.receive(meeting)) as EmailRecord;
    expect(record.state.value).toBe('failed');
    expect(record.state.context.error?.code).toBe('TROUPE_EMAIL_AGENT_LIMIT');
    expect((await a.record('m1'))?.state.value).toBe('failed');
  });

  it('retry runs a failed email again from triage, with its history: the agent sees the calls made before', async () => {
    const { assistant: a, mailbox } = assistant();
    fake.enqueue(respond);
    for (let i = 0; i < 4; i += 1)
      fake.enqueue(
        call('check_calendar_availability_tool', { day: '2026-11-30', time_zone: 'Europe/Berlin' }),
      );
    await a.receive(meeting);
    await expect(a.retry('q9')).rejects.toMatchObject({ code: 'TROUPE_INBOX_INVALID' });
    fake.reset();
    fake.enqueue(
      respond,
      call('schedule_meeting_tool', {
        attendees: ['ben@customer.example'],
        subject: 'Call',
        duration_minutes: 30,
        preferred_day: '2026-11-30',
        start_time: '10:00',
        time_zone: 'Europe/Berlin',
      }),
    );
    const retried = await a.retry('m1');
    expect(retried.state.value).toEqual({ responding: 'reviewing' });
    expect(retried.state.context.error).toBeNull();
    const seen = agentRequests()[0] as ChatRequestBody;
    expect(seen.messages.flatMap(callsOf).map((c) => c.function.name)).toEqual([
      'check_calendar_availability_tool',
      'check_calendar_availability_tool',
      'check_calendar_availability_tool',
    ]);
    expect(await a.failed()).toEqual([]);
    await expect(a.retry('m1')).rejects.toThrow(/has not failed/u);
    // The rest goes on as usual: the invitation, then the short reply, then done.
    fake.enqueue(
      call('send_email_tool', {
        to: 'ben@customer.example',
        subject: 'Re: Meeting',
        content: 'Invite sent. Sam',
      }),
    );
    await a.answer('m1#1', { type: 'accept' });
    fake.enqueue(call('Done', { done: true }));
    const done = (await a.answer('m1#2', { type: 'accept' })).record;
    expect(done.state.value).toBe('done');
    expect(await mailbox.sent()).toHaveLength(1);
  });

  it('Gmail: an email whose agent loops fails, the cursor moves past it, the next email is handled, and the next pass reads nothing again', async () => {
    const google = await startFakeGoogle();
    try {
      const { account } = await openTestAccount(google, store);
      const { model, agentModel } = models(fake);
      const a = new EmailAssistant({
        store,
        mailbox: account.mailbox,
        calendar: account.calendar,
        clock: new SimulatedClock(EMAIL_START),
        model,
        agentModel,
        userName: 'Sam',
        timeZone: 'Europe/Berlin',
      });
      google.addEmail({
        id: 'g1',
        from: 'Ben <ben@customer.example>',
        subject: 'Meeting?',
        text: 'A call on Monday?',
      });
      google.addEmail({
        id: 'g2',
        from: 'Marco <marco@acme.dev>',
        subject: 'API limits',
        text: 'Which limit?',
      });
      // Triage says respond; the agent checks the calendar on every step for the meeting, and
      // drafts a reply for the other.
      fake.respondWith((body) => {
        if (!body.tools) return respond;
        return JSON.stringify(body.messages).includes('Meeting?')
          ? call('check_calendar_availability_tool', { day: '2026-11-30', time_zone: 'Europe/Berlin' })
          : call('send_email_tool', { to: 'marco@acme.dev', subject: 'Re: API limits', content: 'Hi' });
      });
      const first = await account.ingest.poll((input) => a.receive(input));
      expect(first.handed).toEqual(['g1', 'g2']);
      expect((await a.record('g1'))?.state.value).toBe('failed');
      expect((await a.record('g2'))?.state.value).toEqual({ responding: 'reviewing' });
      expect(await account.ingest.cursor()).toBe(first.historyId);
      const second = await account.ingest.poll((input) => a.receive(input));
      expect(second.handed).toEqual([]);
    } finally {
      await google.close();
    }
  });
});
