import { createOpenAI } from '@ai-sdk/openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { SimulatedClock } from '../../src/actors/clock.js';
import { meteredAgentModel, meteredObjectModel } from '../../src/actors/usage/meteredEmailModels.js';
import { meteredTurnModel } from '../../src/actors/usage/meteredTurnModel.js';
import { createUsageLedger } from '../../src/actors/usage/storedUsageLedger.js';
import { createAiSdkAgentModel } from '../../src/adapters/llm/aiSdkAgentModel.js';
import { createAiSdkTurnModel } from '../../src/adapters/llm/aiSdkModel.js';
import { createAiSdkObjectModel } from '../../src/adapters/llm/aiSdkObjectModel.js';
import { createScriptedModel } from '../../src/adapters/llm/scriptedModel.js';
import { createMemoryStore } from '../../src/adapters/store/memory/memoryStore.js';
import { costOf, withOperatorPrices } from '../../src/config/modelPrices.js';
import type { TurnGenerationRequest, TurnModel } from '../../src/ports/model.js';
import { createTestRuntime } from '../../src/testing/index.js';
import { type FakeOpenAiServer, type FakeUsage, startFakeOpenAiServer } from '../support/fakeOpenAiServer.js';
import { luna, requestFor, rex, turnFor } from '../support/llmFixtures.js';

let server: FakeOpenAiServer;
beforeAll(async () => {
  server = await startFakeOpenAiServer();
});
afterAll(async () => {
  await server.close();
});
beforeEach(() => {
  server.reset();
});

const NOW = Date.UTC(2026, 10, 28, 13, 0);
const prices = withOperatorPrices({ 'openai:gpt-test': { input: 0.5, output: 2 } });

function setup() {
  const clock = new SimulatedClock(NOW);
  const ledger = createUsageLedger({
    store: createMemoryStore().documents,
    prices,
    clock,
    scheduleFlush: () => undefined,
  });
  const call = {
    model: createOpenAI({ apiKey: 'sk-test', baseURL: server.baseUrl }).chat('gpt-test'),
    id: 'openai:gpt-test',
    timeoutMs: 60_000,
    maxRetries: 0,
  };
  return { clock, ledger, call };
}

describe('metered turn model: the real AI SDK adapter against a fake that reports usage', () => {
  it('the ledger sums what the fake reported, and the cost is the price table’s arithmetic', async () => {
    const { clock, ledger, call } = setup();
    const model = meteredTurnModel(createAiSdkTurnModel(call), ledger, clock);
    const reported: FakeUsage[] = [
      { prompt_tokens: 120, completion_tokens: 30 },
      { prompt_tokens: 2_345, completion_tokens: 678 },
      { prompt_tokens: 9, completion_tokens: 1 },
    ];
    const texts = ['Sirius.', 'Vega, in summer.', 'Yes.'];
    reported.forEach((usage, i) => {
      server.enqueue({ text: texts[i] ?? '', usage });
    });
    await model.generateTurn(requestFor(luna));
    await model.generateTurn(requestFor(luna, { turn: turnFor(luna, { kind: 'greeting' }) }));
    await model.generateTurn(requestFor(rex, { channelKey: 'test:2', turn: turnFor(rex) }));

    const input = reported.reduce((n, u) => n + u.prompt_tokens, 0);
    const output = reported.reduce((n, u) => n + u.completion_tokens, 0);
    const day = ledger.dayTotals(NOW);
    expect(day).toMatchObject({
      calls: 3,
      callsWithoutUsage: 0,
      inputTokens: input,
      outputTokens: output,
      characters: texts.join('').length,
      unpricedCalls: 0,
    });
    expect(day.costUsd).toBeCloseTo((input * 0.5 + output * 2) / 1_000_000, 12);
    expect(day.costUsd).toBeCloseTo(costOf(prices, 'openai:gpt-test', input, output) ?? Number.NaN, 12);
    expect(ledger.dayTotals(NOW, luna.id).calls).toBe(2);

    const byPurpose = await ledger.report({ by: 'purpose', since: NOW, until: NOW + 1 });
    // The costliest first.
    expect(byPurpose.map((r) => [r.key, r.calls, r.inputTokens, r.outputTokens])).toEqual([
      ['greeting', 1, 2_345, 678],
      ['turn', 2, 120 + 9, 30 + 1],
    ]);
    const byChannel = await ledger.report({ by: 'channel', since: NOW, until: NOW + 1 });
    expect(byChannel.map((r) => [r.key, r.calls])).toEqual([
      ['test:1', 2],
      ['test:2', 1],
    ]);
  });

  it('a fake that reports no usage gives calls without usage, never zero tokens', async () => {
    const { clock, ledger, call } = setup();
    const model = meteredTurnModel(createAiSdkTurnModel(call), ledger, clock);
    server.enqueue({ text: 'Sirius.', usage: null }, { text: 'Vega.', usage: null });
    await model.generateTurn(requestFor());
    await model.generateTurn(requestFor());
    expect(ledger.dayTotals(NOW)).toEqual({
      calls: 2,
      callsWithoutUsage: 2,
      inputTokens: 0,
      outputTokens: 0,
      characters: 'Sirius.Vega.'.length,
      costUsd: 0,
      unpricedCalls: 0,
    });
  });

  it('a failed call records nothing', async () => {
    const { clock, ledger, call } = setup();
    const model = meteredTurnModel(createAiSdkTurnModel(call), ledger, clock);
    server.enqueue({ status: 400, message: 'bad request' });
    await expect(model.generateTurn(requestFor())).rejects.toMatchObject({ code: 'TROUPE_MODEL_FAILED' });
    expect(ledger.dayTotals(NOW).calls).toBe(0);
  });
});

describe('metered turn model: what the runtime relies on', () => {
  it('keeps id, offline, local and readsPrompt, and hands the request on as it came', async () => {
    const { clock, ledger } = setup();
    const scripted = createScriptedModel();
    const metered = meteredTurnModel(scripted, ledger, clock);
    expect([metered.id, metered.offline, metered.readsPrompt, 'local' in metered]).toEqual([
      'offline:scripted',
      true,
      false,
      false,
    ]);
    const seen: TurnGenerationRequest[] = [];
    const local: TurnModel = {
      id: 'test:local',
      offline: false,
      local: true,
      generateTurn: async (request) => {
        seen.push(request);
        return { text: 'hi', mentions: [], model: 'test:local' };
      },
    };
    const wrapped = meteredTurnModel(local, ledger, clock);
    expect([wrapped.local, 'readsPrompt' in wrapped]).toEqual([true, false]);
    // A request whose signal is made only when read: the wrapper neither copies nor reads it.
    let signalRead = false;
    const request = requestFor();
    Object.defineProperty(request, 'signal', {
      get: () => {
        signalRead = true;
        return undefined;
      },
    });
    await wrapped.generateTurn(request);
    expect(seen[0]).toBe(request);
    expect(signalRead).toBe(false);
  });

  it('the offline model counts calls and characters at zero cost', async () => {
    const { clock, ledger } = setup();
    const metered = meteredTurnModel(createScriptedModel(), ledger, clock);
    const result = await metered.generateTurn(requestFor());
    expect(ledger.dayTotals(NOW, luna.id)).toMatchObject({
      calls: 1,
      callsWithoutUsage: 0,
      characters: result.text.length,
      costUsd: 0,
    });
  });
});

describe('the email assistant’s models, metered', () => {
  it('records triage, memory updates and agent steps with the usage the fake reported', async () => {
    const { clock, ledger, call } = setup();
    const meter = { ledger, clock, scope: 'mail:sam@example.com' };
    const triage = meteredObjectModel(createAiSdkObjectModel(call), meter, 'triage');
    const memory = meteredObjectModel(createAiSdkObjectModel(call), meter, 'memory-update');
    const agent = meteredAgentModel(createAiSdkAgentModel(call), meter);
    server.enqueue(
      { json: { classification: 'notify' }, usage: { prompt_tokens: 300, completion_tokens: 20 } },
      { json: { text: 'likes short answers' }, usage: null },
      {
        toolCalls: [{ name: 'Done', arguments: { done: true } }],
        usage: { prompt_tokens: 50, completion_tokens: 7 },
      },
    );
    const prompt = { system: 'Decide.', messages: [{ role: 'user' as const, content: 'An email.' }] };
    let told: unknown;
    await triage.generateObject({
      prompt,
      schema: z.object({ classification: z.string() }),
      schemaName: 'triage_decision',
      onUsage: (usage) => {
        told = usage;
      },
    });
    expect(told).toMatchObject({ inputTokens: 300, outputTokens: 20 });
    await memory.generateObject({
      prompt,
      schema: z.object({ text: z.string() }),
      schemaName: 'user_preferences',
    });
    await agent.nextToolCall({
      system: 'Act.',
      messages: [{ role: 'user', content: 'An email.' }],
      tools: { Done: { description: 'Finish.', inputSchema: z.object({ done: z.boolean() }) } },
    });
    const rows = await ledger.report({ by: 'purpose', since: NOW, until: NOW + 1 });
    expect(rows.map((r) => [r.key, r.calls, r.callsWithoutUsage, r.inputTokens, r.outputTokens])).toEqual([
      ['triage', 1, 0, 300, 20],
      ['agent-step', 1, 0, 50, 7],
      ['memory-update', 1, 1, 0, 0],
    ]);
    const [email] = await ledger.report({ by: 'avatar', since: NOW, until: NOW + 1 });
    expect(email).toMatchObject({ key: 'email', calls: 3 });
    expect(email?.costUsd).toBeCloseTo((350 * 0.5 + 27 * 2) / 1_000_000, 12);
    const [mailbox] = await ledger.report({ by: 'channel', since: NOW, until: NOW + 1 });
    expect(mailbox?.key).toBe('mail:sam@example.com');
  });
});

describe('a runtime on the real AI SDK adapter against a fake that reports usage', () => {
  it('records every turn in its ledger: the sums are what the fake reported, the cost the price table’s', async () => {
    const { call } = setup();
    const store = createMemoryStore();
    const usage = createUsageLedger({ store: store.documents, prices });
    const t = createTestRuntime({
      avatars: [
        { id: 'luna', name: 'Luna', residentIn: ['test:room'] },
        { id: 'rex', name: 'Rex', residentIn: ['test:room'] },
      ],
      model: createAiSdkTurnModel(call),
      store,
      usage,
      startAt: NOW,
      config: { botMentionCreateThread: false, botCascadeLimit: 0, summonProactiveEnabled: false },
    });
    const reported: FakeUsage[] = [
      { prompt_tokens: 410, completion_tokens: 52 },
      { prompt_tokens: 388, completion_tokens: 17 },
      { prompt_tokens: 901, completion_tokens: 240 },
    ];
    for (const u of reported) server.enqueue({ text: 'Noted.', usage: u });
    await t.say('Luna, hello');
    await t.say('Rex, hello');
    await t.say('Luna, and now?');
    expect(t.transport.texts()).toEqual(['Noted.', 'Noted.', 'Noted.']);
    const input = reported.reduce((n, u) => n + u.prompt_tokens, 0);
    const output = reported.reduce((n, u) => n + u.completion_tokens, 0);
    const rows = await usage.report({ by: 'avatar', since: NOW });
    expect(rows.map((r) => [r.key, r.calls, r.inputTokens, r.outputTokens])).toEqual([
      ['luna', 2, 410 + 901, 52 + 240],
      ['rex', 1, 388, 17],
    ]);
    const total = usage.dayTotals(t.clock.now());
    expect([total.inputTokens, total.outputTokens]).toEqual([input, output]);
    expect(total.costUsd).toBeCloseTo((input * 0.5 + output * 2) / 1_000_000, 12);
    expect((await usage.report({ by: 'channel', since: NOW })).map((r) => r.key)).toEqual(['test:room']);
    await t.stop();
    // Stopping wrote it all: a fresh ledger on the same store reads the same day.
    const again = createUsageLedger({ store: store.documents, prices });
    await again.load(NOW);
    expect(again.dayTotals(NOW)).toEqual(total);
  });
});
