import { createOpenAI } from '@ai-sdk/openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createAiSdkTurnModel } from '../../src/adapters/llm/aiSdkModel.js';
import { silentLogger } from '../../src/logging/logger.js';
import { createTestRuntime } from '../../src/testing/index.js';
import { type FakeOpenAiServer, startFakeOpenAiServer } from '../support/fakeOpenAiServer.js';

/** The whole pipeline with a real model adapter: runtime → AI SDK → HTTP → fake OpenAI → delivery. */
describe('the runtime with an AI SDK model', () => {
  let server: FakeOpenAiServer;
  beforeAll(async () => {
    server = await startFakeOpenAiServer();
  });
  afterAll(() => server.close());
  beforeEach(() => server.reset());

  const runtimeWithModel = () =>
    createTestRuntime({
      model: createAiSdkTurnModel({
        model: createOpenAI({ baseURL: server.baseUrl, apiKey: 'sk-test-secret' }).chat('gpt-test'),
        id: 'openai:gpt-test',
        maxRetries: 0,
        logger: silentLogger(),
      }),
      avatars: [
        {
          id: 'nova',
          name: 'Nova',
          persona: 'A dreamy astronomer who names comets.',
          residentIn: ['test:room'],
        },
        { id: 'rex', name: 'Rex', persona: 'A retired T. rex who runs a bakery.', residentIn: ['test:room'] },
      ],
    });

  it('sends persona, history and who is present, and delivers what the model wrote', async () => {
    const t = runtimeWithModel();
    server.enqueue({ text: 'Nova: The one with the green tail is Comet Ada.' });
    await t.say('Nova, which comet is that?');
    expect(t.transport.texts()).toEqual(['The one with the green tail is Comet Ada.']);
    const body = server.chatRequests()[0];
    const system = JSON.stringify(body?.messages.filter((m) => m.role === 'system'));
    expect(system).toMatch(/Nova/);
    expect(system).toMatch(/astronomer/);
    expect(system).toMatch(/Rex/);
    expect(JSON.stringify(body?.messages.at(-1))).toMatch(/Ada: Nova, which comet is that\?/);

    server.enqueue({ text: 'Sourdough, obviously.' });
    await t.advance(60_000);
    await t.say('Rex, what do you bake?');
    const second = JSON.stringify(server.chatRequests()[1]?.messages);
    expect(second).toMatch(/Comet Ada/); // the delivered reply is in the history now
    await t.stop();
  });

  it('turns a provider failure into a friendly message, never the provider’s text', async () => {
    const t = runtimeWithModel();
    server.enqueue({ status: 500, message: 'upstream exploded: stack at /srv/model.py:42' });
    await t.say('Nova, hello?');
    expect(t.transport.texts()).toEqual([
      "I can't reach my language model right now. Please try again shortly.",
    ]);
    expect((await t.history.all('test:room')).map((e) => e.author.kind)).toEqual(['human']);
    await t.stop();
  });
});
