import { createServer } from 'node:net';
import { createOpenAI } from '@ai-sdk/openai';
import { tool } from 'ai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAiSdkTurnModel } from '../../../src/adapters/llm/aiSdkModel.js';
import { createConcurrencyLimit } from '../../../src/adapters/llm/concurrencyLimit.js';
import { modelFromEnv } from '../../../src/adapters/llm/modelFromEnv.js';
import { generateStructured } from '../../../src/adapters/llm/structuredOutput.js';
import { TroupeError } from '../../../src/ports/troupeError.js';
import { type FakeOpenAiServer, startFakeOpenAiServer } from '../../support/fakeOpenAiServer.js';
import { capturingLogger, luna, requestFor, samplePrompt } from '../../support/llmFixtures.js';

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

function openAiModel(baseURL = server.baseUrl) {
  return createOpenAI({ apiKey: 'sk-test-openai-key', baseURL }).chat('gpt-test');
}

function turnModel(overrides: Partial<Parameters<typeof createAiSdkTurnModel>[0]> = {}) {
  return createAiSdkTurnModel({
    model: openAiModel(),
    id: 'openai:gpt-test',
    // Generous: the fake server is in this process, and a loaded machine only makes it slower.
    timeoutMs: 60_000,
    maxRetries: 0,
    concurrency: 4,
    apiKeyVariable: 'OPENAI_API_KEY',
    ...overrides,
  });
}

/** The rejection of `promise`, which must be a TroupeError. */
async function failure(promise: Promise<unknown>): Promise<TroupeError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(TroupeError);
  return error as TroupeError;
}

describe('AI SDK turn model against a local OpenAI-compatible server', () => {
  it('sends the system prompt and messages and returns the reply', async () => {
    server.enqueue({ text: 'Sirius, of course.' });
    const result = await turnModel().generateTurn(requestFor());
    expect(result).toMatchObject({ text: 'Sirius, of course.', mentions: [] });
    expect(result.model).toBe('openai:gpt-test');
    const [body] = server.chatRequests();
    expect(body?.model).toBe('gpt-test');
    expect(body?.messages).toEqual([
      { role: 'system', content: samplePrompt.system },
      { role: 'user', content: 'Ada: Luna, what is the brightest star?' },
    ]);
    expect(server.requests[0]?.headers.authorization).toBe('Bearer sk-test-openai-key');
  });

  it('reports usage and logs it at info without prompt text or key', async () => {
    server.enqueue({ text: 'Sirius.', usage: { prompt_tokens: 12, completion_tokens: 3 } });
    const { logger, lines } = capturingLogger();
    const result = await turnModel({ logger }).generateTurn(requestFor());
    expect(result.usage).toEqual({ inputTokens: 12, outputTokens: 3, totalTokens: 15 });
    expect(lines).toHaveLength(1);
    const entry = JSON.parse(lines[0] ?? '{}') as Record<string, unknown>;
    expect(entry).toMatchObject({
      level: 30,
      model: 'openai:gpt-test',
      operation: 'turn',
      inputTokens: 12,
      outputTokens: 3,
      totalTokens: 15,
      msg: 'model call finished',
    });
    expect(typeof entry.ms).toBe('number');
    const all = lines.join('\n');
    expect(all).not.toContain('brightest star');
    expect(all).not.toContain('Keep it short');
    expect(all).not.toContain('sk-test-openai-key');
  });

  it('returns the reply as written: the [voice] prefix and a name label are left to preparation', async () => {
    server.enqueue({ text: '  [Voice]  Luna: Twinkle, twinkle!\n' });
    const spoken = await turnModel().generateTurn(requestFor());
    expect(spoken.text).toBe('[Voice]  Luna: Twinkle, twinkle!');
    expect(spoken.voiceRequested).toBeUndefined();
  });

  it('calls a tool, feeds the result back and answers', async () => {
    const calls: unknown[] = [];
    const tools = {
      lookupStar: tool({
        description: 'Looks up a star by name.',
        inputSchema: z.object({ name: z.string() }),
        execute: async ({ name }) => {
          calls.push(name);
          return { name, magnitude: -1.46 };
        },
      }),
    };
    server.enqueue(
      { toolCalls: [{ id: 'call_1', name: 'lookupStar', arguments: { name: 'Sirius' } }] },
      { text: 'Sirius shines at magnitude -1.46.' },
    );
    const result = await turnModel({ tools, maxSteps: 3 }).generateTurn(requestFor());
    expect(result.text).toBe('Sirius shines at magnitude -1.46.');
    expect(calls).toEqual(['Sirius']);
    expect(result.usage).toEqual({ inputTokens: 20, outputTokens: 10, totalTokens: 30 });

    const [first, second] = server.chatRequests();
    expect(first?.tools?.[0]?.function.name).toBe('lookupStar');
    expect(first?.tools?.[0]?.function.parameters).toMatchObject({
      type: 'object',
      properties: { name: { type: 'string' } },
    });
    const toolMessage = second?.messages.find((m) => m.role === 'tool');
    expect(toolMessage?.tool_call_id).toBe('call_1');
    expect(JSON.parse(String(toolMessage?.content))).toEqual({ name: 'Sirius', magnitude: -1.46 });
    expect(second?.messages.find((m) => m.role === 'assistant')?.tool_calls).toHaveLength(1);
  });

  it('reports an empty reply as TROUPE_MODEL_EMPTY', async () => {
    server.enqueue({ text: '  \n  ' });
    const error = await failure(turnModel().generateTurn(requestFor()));
    expect(error.code).toBe('TROUPE_MODEL_EMPTY');
  });

  it('parses structured output into a zod schema, sending the JSON schema', async () => {
    const schema = z.object({ mood: z.enum(['calm', 'cross']), score: z.number() });
    server.enqueue({ json: { mood: 'calm', score: 0.8 } });
    const { logger, lines } = capturingLogger();
    const value = await generateStructured({
      model: openAiModel(),
      id: 'openai:gpt-test',
      schema,
      schemaName: 'mood',
      prompt: 'How does this email feel?',
      maxRetries: 0,
      logger,
    });
    expect(value).toEqual({ mood: 'calm', score: 0.8 });
    const [body] = server.chatRequests();
    expect(body?.response_format?.type).toBe('json_schema');
    expect(body?.response_format?.json_schema?.schema).toMatchObject({
      type: 'object',
      properties: { mood: { enum: ['calm', 'cross'] }, score: { type: 'number' } },
    });
    expect(JSON.parse(lines[0] ?? '{}')).toMatchObject({ operation: 'structured', totalTokens: 15 });
  });

  it('reports structured output that does not fit the schema as TROUPE_MODEL_FAILED', async () => {
    server.enqueue({ json: { mood: 'ecstatic' } });
    const error = await failure(
      generateStructured({
        model: openAiModel(),
        schema: z.object({ mood: z.enum(['calm', 'cross']) }),
        prompt: 'Mood?',
        maxRetries: 0,
      }),
    );
    expect(error.code).toBe('TROUPE_MODEL_FAILED');
    expect(error.message).toContain('expected format');
  });

  it('retries a 429 (honouring retry-after) and then succeeds', async () => {
    server.enqueue({ status: 429, headers: { 'retry-after': '0' } }, { text: 'Made it.' });
    const result = await turnModel({ maxRetries: 2 }).generateTurn(requestFor());
    expect(result.text).toBe('Made it.');
    expect(server.chatRequests()).toHaveLength(2);
  });

  it('gives TROUPE_MODEL_RATE_LIMITED once retries run out', async () => {
    server.enqueue(
      { status: 429, headers: { 'retry-after': '0' } },
      { status: 429, headers: { 'retry-after': '0' } },
    );
    const error = await failure(turnModel({ maxRetries: 1 }).generateTurn(requestFor()));
    expect(error).toMatchObject({ code: 'TROUPE_MODEL_RATE_LIMITED', retryable: true });
    expect(error.details).toMatchObject({ statusCode: 429, attempts: 2 });
  });

  it('gives TROUPE_MODEL_AUTH for a 401 without retrying, naming the key variable', async () => {
    server.enqueue({ status: 401, message: 'Incorrect API key provided' }, { text: 'never sent' });
    const { logger, lines } = capturingLogger();
    const error = await failure(turnModel({ maxRetries: 2, logger }).generateTurn(requestFor()));
    expect(error).toMatchObject({ code: 'TROUPE_MODEL_AUTH', retryable: false });
    expect(error.message).toContain('OPENAI_API_KEY');
    expect(error.message).not.toMatch(/\n\s+at /);
    expect(server.chatRequests()).toHaveLength(1);
    expect(JSON.parse(lines[0] ?? '{}')).toMatchObject({
      level: 40,
      code: 'TROUPE_MODEL_AUTH',
      statusCode: 401,
    });
  });

  it('gives TROUPE_MODEL_UNAVAILABLE for a 500', async () => {
    server.enqueue({ status: 500, message: 'boom' });
    const error = await failure(turnModel().generateTurn(requestFor()));
    expect(error).toMatchObject({ code: 'TROUPE_MODEL_UNAVAILABLE', retryable: true });
    expect(error.message).toContain('HTTP 500');
  });

  it('gives TROUPE_MODEL_UNAVAILABLE when the connection is refused', async () => {
    const closedPort = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as { port: number };
        probe.close(() => resolve(port));
      });
    });
    const model = turnModel({ model: openAiModel(`http://127.0.0.1:${closedPort}/v1`) });
    const error = await failure(model.generateTurn(requestFor()));
    expect(error).toMatchObject({ code: 'TROUPE_MODEL_UNAVAILABLE', retryable: true });
    expect(error.message).toContain(`127.0.0.1:${closedPort}`);
  });

  it('gives TROUPE_MODEL_FAILED with a hint for an unknown model (404)', async () => {
    server.enqueue({ status: 404, message: 'The model `gpt-test` does not exist' });
    const error = await failure(turnModel().generateTurn(requestFor()));
    expect(error).toMatchObject({ code: 'TROUPE_MODEL_FAILED', retryable: false });
    expect(error.message).toContain('does not exist');
    expect(error.message).toContain('TROUPE_MODEL');
  });

  it('gives TROUPE_MODEL_TIMEOUT when the server never answers', async () => {
    server.enqueue({ hang: true });
    // The server never answers: only the timeout can end the call.
    const error = await failure(turnModel({ timeoutMs: 200 }).generateTurn(requestFor()));
    expect(error).toMatchObject({ code: 'TROUPE_MODEL_TIMEOUT', retryable: true });
  });

  it('gives TROUPE_MODEL_ABORTED when the caller aborts', async () => {
    server.enqueue({ hang: true });
    const controller = new AbortController();
    const pending = turnModel().generateTurn(requestFor(luna, { signal: controller.signal }));
    setTimeout(() => controller.abort(), 50);
    const error = await failure(pending);
    expect(error).toMatchObject({ code: 'TROUPE_MODEL_ABORTED', retryable: false });
  });

  it('never has more calls in flight than the concurrency limit', async () => {
    for (let i = 0; i < 5; i += 1) server.enqueue({ text: `reply ${i}`, delayMs: 40 });
    const model = turnModel({ concurrency: 2 });
    const results = await Promise.all(Array.from({ length: 5 }, () => model.generateTurn(requestFor())));
    expect(results.map((r) => r.text).sort()).toEqual([
      'reply 0',
      'reply 1',
      'reply 2',
      'reply 3',
      'reply 4',
    ]);
    expect(server.chatRequests()).toHaveLength(5);
    expect(server.maxInFlight).toBe(2);
  });

  it('shares one limit between turns and structured calls', async () => {
    const limit = createConcurrencyLimit(1);
    server.enqueue({ text: 'one', delayMs: 30 }, { json: { ok: true } });
    const [turn, structured] = await Promise.all([
      turnModel({ limit }).generateTurn(requestFor()),
      generateStructured({
        model: openAiModel(),
        schema: z.object({ ok: z.boolean() }),
        prompt: 'ok?',
        limit,
      }),
    ]);
    expect(turn.text).toBe('one');
    expect(structured).toEqual({ ok: true });
    expect(server.maxInFlight).toBe(1);
    expect(limit.active).toBe(0);
  });
});

describe('modelFromEnv against the local server', () => {
  it('uses an openai-compatible server from TROUPE_MODEL_BASE_URL, sending the key and never logging it', async () => {
    const secret = 'sk-compat-secret-0123456789';
    const { logger, lines } = capturingLogger();
    const { model, description, languageModel, limit } = modelFromEnv(
      {
        TROUPE_MODEL_BASE_URL: server.baseUrl,
        TROUPE_MODEL: 'llama-test',
        TROUPE_MODEL_API_KEY: secret,
        TROUPE_MODEL_RETRIES: '0',
        TROUPE_MODEL_TIMEOUT: '5s',
      },
      { logger },
    );
    expect(model.id).toBe('openai-compatible:llama-test');
    expect(model.offline).toBe(false);
    expect(description).toContain(server.baseUrl);
    expect(description).not.toContain(secret);

    server.enqueue({ text: 'Hello from a local model.' });
    const result = await model.generateTurn(requestFor());
    expect(result.text).toBe('Hello from a local model.');
    expect(server.requests[0]?.path).toBe('/v1/chat/completions');
    expect(server.requests[0]?.headers.authorization).toBe(`Bearer ${secret}`);
    expect(server.chatRequests()[0]?.model).toBe('llama-test');

    // Structured output through the same model sends the schema (supportsStructuredOutputs).
    server.enqueue({ json: { ok: true } });
    if (!languageModel) throw new Error('expected a language model');
    const value = await generateStructured({
      model: languageModel,
      id: model.id,
      schema: z.object({ ok: z.boolean() }),
      prompt: 'ok?',
      logger,
      ...(limit ? { limit } : {}),
    });
    expect(value).toEqual({ ok: true });
    expect(server.chatRequests()[1]?.response_format?.type).toBe('json_schema');

    server.enqueue({ status: 401, message: `Invalid key ${secret}` });
    const error = await failure(model.generateTurn(requestFor()));
    expect(error.code).toBe('TROUPE_MODEL_AUTH');
    expect(error.message).toContain('TROUPE_MODEL_API_KEY');
    expect(error.message).not.toContain(secret);

    expect(lines.length).toBeGreaterThanOrEqual(3);
    expect(lines.join('\n')).not.toContain(secret);
  });

  it('uses OpenAI chat completions (not the responses API) with the default model', async () => {
    const { model } = modelFromEnv({
      TROUPE_MODEL_PROVIDER: 'openai',
      OPENAI_API_KEY: 'sk-openai-env-key',
      TROUPE_MODEL_BASE_URL: server.baseUrl,
      TROUPE_MODEL_RETRIES: '0',
    });
    server.enqueue({ text: 'Proxy says hi.' });
    expect((await model.generateTurn(requestFor())).text).toBe('Proxy says hi.');
    expect(server.requests[0]?.path).toBe('/v1/chat/completions');
    expect(server.chatRequests()[0]?.model).toBe('gpt-4o-mini');
    expect(server.requests[0]?.headers.authorization).toBe('Bearer sk-openai-env-key');
  });
});
