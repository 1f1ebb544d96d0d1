/**
 * The mock model of `troupe/testing`: fixed replies, a script, a function of the request, errors,
 * usage and tool calls, and the record of what it was asked, through a whole test runtime.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { TroupeError } from '../../src/ports/troupeError.js';
import { createTestRuntime, mockModel } from '../../src/testing/index.js';
import { requestFor } from '../support/llmFixtures.js';

const nova = { id: 'nova', name: 'Nova', residentIn: ['test:room'] };

describe('mockModel', () => {
  it('answers every call with a fixed reply, and records each request with its prompt', async () => {
    const model = mockModel('Hello, Ada.');
    const t = createTestRuntime({ avatars: [nova], model });
    await t.say('Nova, hello');
    await t.say('Nova, are you there?');
    expect(t.transport.texts()).toEqual(['Hello, Ada.', 'Hello, Ada.']);
    expect(model.calls.map((call) => call.avatar.id)).toEqual(['nova', 'nova']);
    expect(model.calls[1]?.turn.context.triggerText).toBe('Nova, are you there?');
    expect(model.calls[1]?.prompt.messages.map((m) => m.content).join('\n')).toContain('Nova, hello');
    await t.stop();
  });

  it('follows a script, one reply per call: text, then an error as a failing model throws it', async () => {
    const model = mockModel([
      'First.',
      new TroupeError('TROUPE_MODEL_UNAVAILABLE', 'The model is away.', { retryable: true }),
    ]);
    const t = createTestRuntime({ avatars: [nova], model });
    await t.say('Nova, one');
    await t.say('Nova, two');
    expect(t.transport.texts()[0]).toBe('First.');
    expect(t.errors.map((e) => e.code)).toContain('TROUPE_MODEL_UNAVAILABLE');
    await t.stop();
  });

  it('fails a call past the end of its script, naming the call', async () => {
    const model = mockModel(['Only.']);
    expect((await model.generateTurn(requestFor())).text).toBe('Only.');
    const past = await model.generateTurn(requestFor()).catch((e: unknown) => e);
    expect(past).toMatchObject({ code: 'TROUPE_TEST_SCRIPT_ENDED' });
    expect((past as Error).message).toMatch(/1 scripted replies, none left for call 2 \(Luna in test:1\)/u);
  });

  it('makes replies from the request and the call index, and reports usage, mentions and voice', async () => {
    const model = mockModel((request, index) => ({
      text: `${request.avatar.name} #${index}`,
      mentions: ['rex'],
      voiceRequested: true,
      usage: { inputTokens: 3, outputTokens: 2, totalTokens: 5 },
    }));
    expect(await model.generateTurn(requestFor())).toEqual({
      text: 'Luna #0',
      mentions: ['rex'],
      voiceRequested: true,
      model: 'mock:model',
      usage: { inputTokens: 3, outputTokens: 2, totalTokens: 5 },
    });
    expect((await model.generateTurn(requestFor())).text).toBe('Luna #1');
  });

  it('calls the tools a reply names, with inputs parsed by their schema, and records what they returned', async () => {
    const looked: unknown[] = [];
    const tools = {
      lookupStar: {
        description: 'Looks up a star.',
        inputSchema: z.object({ name: z.string().trim() }),
        execute: async (input: { name: string }) => {
          looked.push(input);
          return `${input.name}: 8.6 light years`;
        },
      },
    };
    const model = mockModel({
      text: 'Sirius is close.',
      toolCalls: [{ tool: 'lookupStar', input: { name: ' Sirius ' } }],
    });
    const result = await model.generateTurn(requestFor(undefined, { tools }));
    expect(result.text).toBe('Sirius is close.');
    expect(looked).toEqual([{ name: 'Sirius' }]);
    expect(model.toolCalls).toEqual([
      { tool: 'lookupStar', input: { name: 'Sirius' }, output: 'Sirius: 8.6 light years' },
    ]);
    const missing = await mockModel({ text: 'x', toolCalls: [{ tool: 'weather', input: {} }] })
      .generateTurn(requestFor(undefined, { tools }))
      .catch((e: unknown) => e);
    expect(missing).toMatchObject({ code: 'TROUPE_TEST_TOOL_MISSING' });
    expect((missing as Error).message).toContain('offers "lookupStar"');
  });

  it('keeps only the last `retain` calls while counting them all', async () => {
    const model = mockModel((_, index) => `reply ${index}`, { retain: 2 });
    for (let i = 0; i < 5; i++) await model.generateTurn(requestFor(undefined, { channelKey: `test:${i}` }));
    expect(model.calls.map((c) => c.channelKey)).toEqual(['test:3', 'test:4']);
    expect((await model.generateTurn(requestFor())).text).toBe('reply 5');
    const none = mockModel('x', { retain: 0 });
    await none.generateTurn(requestFor());
    expect(none.calls).toEqual([]);
  });

  it('is external unless told it is local, like a real model; its id is its own', () => {
    expect(mockModel('x')).toMatchObject({ id: 'mock:model', offline: false });
    expect(mockModel('x').local).toBeUndefined();
    expect(mockModel('x', { id: 'test:fixed', local: true, readsPrompt: false })).toMatchObject({
      id: 'test:fixed',
      local: true,
      readsPrompt: false,
    });
  });
});
