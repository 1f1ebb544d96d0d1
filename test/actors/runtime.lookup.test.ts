/**
 * The lookup tool through the whole runtime: the offline model recognises plain requests, the
 * envelope goes through the composer, the reply through preparation and routing; a numbered pick
 * re-runs the tool by id; telemetry lands in the store. Then the same with a real model adapter
 * that calls the tool (AI SDK against the local OpenAI-compatible fake).
 */

import { createOpenAI } from '@ai-sdk/openai';
import type { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AGENT_EVENT_LOGS } from '../../src/actors/tools/lookupDesk.js';
import { createAiSdkTurnModel } from '../../src/adapters/llm/aiSdkModel.js';
import { createDemoErp } from '../../src/adapters/sql/demoErp.js';
import { createEntityLookup } from '../../src/adapters/sql/entityLookup.js';
import { silentLogger } from '../../src/logging/logger.js';
import type { TurnModel } from '../../src/ports/model.js';
import { createTestRuntime } from '../../src/testing/index.js';
import { type FakeOpenAiServer, startFakeOpenAiServer } from '../support/fakeOpenAiServer.js';

let erp: PGlite;
let server: FakeOpenAiServer;
beforeAll(async () => {
  erp = (await createDemoErp()) as PGlite;
  server = await startFakeOpenAiServer();
});
afterAll(async () => {
  await server?.close();
  await erp?.close();
});

const dewey = {
  id: 'dewey',
  name: 'Dewey',
  persona: 'A sardonic robot librarian.',
  tools: ['entity_lookup' as const],
  residentIn: ['test:office'],
};
const office = { kind: 'test', id: 'office' };

function runtime(options: { model?: TurnModel; env?: Record<string, string> } = {}) {
  const env = options.env ?? {};
  return createTestRuntime({
    avatars: [dewey],
    channel: office,
    ...(options.model ? { model: options.model } : {}),
    lookup: { tool: createEntityLookup({ db: erp, logger: silentLogger() }), composer: { env: () => env } },
  });
}

describe('the lookup tool through the runtime (offline model)', () => {
  it('answers a plain lookup request with the composed reply, using the stored name', async () => {
    const t = runtime();
    await t.say('Dewey, what is the phone number for parts for truck inc?');
    const reply = t.transport.texts().join('\n');
    expect(reply).toContain('Parts for Truck Inc');
    expect(reply).toContain('555-0100');
    const logged = await t.store.events.read(AGENT_EVENT_LOGS);
    expect(logged.map((e) => e.data)).toEqual([
      expect.objectContaining({
        response_mode: 'success',
        attempts: { exact: true, fuzzy: false, schema_refreshed: false },
      }),
    ]);
    await t.stop();
  });

  it('numbers the options of an ambiguous name, and a reply of "2" re-runs the tool by id', async () => {
    const t = runtime();
    await t.say('Dewey, find vendor Parts');
    const options = t.transport.texts().join('\n');
    expect(options).toMatch(/1\. .*Parts/u);
    expect(options).toMatch(/2\. /u);
    await t.advance(5_000);
    await t.say('Dewey, the second one');
    const pick = t.transport.texts().at(-1) ?? '';
    expect(pick).not.toMatch(/1\. /u);
    const modes = (await t.store.events.read(AGENT_EVENT_LOGS)).map((e) => e.data.response_mode);
    expect(modes).toEqual(['disambiguation', 'success']);
    await t.stop();
  });

  it('an unrelated reply clears the pending choice', async () => {
    const t = runtime();
    await t.say('Dewey, find vendor Parts');
    await t.advance(5_000);
    await t.say('Dewey, status of PO-1001');
    await t.advance(5_000);
    await t.say('Dewey, 2');
    const modes = (await t.store.events.read(AGENT_EVENT_LOGS)).map((e) => e.data.response_mode);
    expect(modes).toEqual(['disambiguation', 'success']);
    expect(t.transport.texts().join('\n')).toContain('PO-1001');
    await t.stop();
  });

  it('counts an empty result after a fuzzy attempt, and reads capabilities per composition', async () => {
    const env: Record<string, string> = {};
    const t = runtime({ env });
    await t.say('Dewey, find vendor Zebra Quantum Widgets');
    expect(await t.store.events.counter('empty_with_fuzzy_attempted')).toBe(1);
    expect(t.transport.texts().at(-1)).toMatch(/Vendors → Add New/u);
    env.AGENT_CAN_CREATE_VENDOR = 'true';
    await t.advance(5_000);
    await t.say('Dewey, find vendor Zebra Quantum Widgets');
    expect(t.transport.texts().at(-1)).not.toMatch(/Vendors → Add New/u);
    expect(await t.store.events.counter('empty_with_fuzzy_attempted')).toBe(2);
    await t.stop();
  });
});

describe('the lookup tool called by a real model adapter', () => {
  it('runs the tool the model calls and delivers the composed reply', async () => {
    server.reset();
    server.enqueue(
      {
        toolCalls: [
          { name: 'entity_lookup', arguments: { entity_type: 'purchase_order', order_number: 'PO-1001' } },
        ],
      },
      { text: 'Here you go.' },
    );
    const model = createAiSdkTurnModel({
      model: createOpenAI({ baseURL: server.baseUrl, apiKey: 'test' }).chat('gpt-test'),
      id: 'openai:gpt-test',
      maxRetries: 0,
      logger: silentLogger(),
    });
    const t = runtime({ model });
    await t.say('Dewey, where is our order PO-1001?');
    const reply = t.transport.texts().join('\n');
    expect(reply).toContain('PO-1001');
    expect(reply).not.toContain('Here you go.');
    const tools = server.chatRequests()[0]?.tools?.map((tool) => tool.function.name);
    expect(tools).toEqual(['entity_lookup']);
    await t.stop();
  });
});
