/**
 * The in-memory store keeps the history lines a prompt reads, and no more: a long conversation
 * stays bounded, and prompts still carry the window they read.
 */
import { describe, expect, it } from 'vitest';
import { createMemoryStore } from '../../src/adapters/store/memory/memoryStore.js';
import { createRuntime } from '../../src/createRuntime.js';
import { silentLogger } from '../../src/logging/logger.js';
import { DEFAULT_HISTORY_WINDOW } from '../../src/ports/history.js';
import type { PromptMessage } from '../../src/ports/model.js';
import type { TroupeStore } from '../../src/ports/store.js';
import { mockModel, RecordingTransport } from '../../src/testing/index.js';

const room = { kind: 'test', id: 'room' };
const avatars = [{ id: 'nova', name: 'Nova', residentIn: ['test:room'] }];

/** The channel lines a prompt carried (not the notes the prompt adds, in parentheses). */
const lines = (prompt: PromptMessage[] | undefined) =>
  (prompt ?? []).filter((m) => !m.content.startsWith('('));

/** Asks Nova `n` questions, one at a time; returns what each prompt carried. */
async function converse(n: number, options: { store?: TroupeStore; historyLimit?: number }) {
  const model = mockModel((_, index) => `ok ${index + 1}`);
  const runtime = createRuntime({
    avatars,
    model,
    transports: [new RecordingTransport()],
    logger: silentLogger(),
    config: { summonProactiveEnabled: false },
    ...options,
  });
  for (let i = 1; i <= n; i += 1) {
    runtime.send({
      type: 'channel.message',
      channel: room,
      messageId: `q${i}`,
      author: { kind: 'human', id: 'u1', name: 'Ada' },
      text: `Nova, question ${i}?`,
    });
    await runtime.whenIdle();
  }
  await runtime.stop();
  return model.calls.map((call) => call.prompt.messages);
}

describe('channel history in memory', () => {
  it('keeps the last lines a prompt reads per channel, however long the conversation', async () => {
    const store = createMemoryStore();
    await converse(60, { store });
    const kept = await store.history.recent('test:room', 1_000);
    expect(kept).toHaveLength(DEFAULT_HISTORY_WINDOW);
    // The newest lines: the last question and its answer.
    expect(kept.at(-2)?.text).toBe('Nova, question 60?');
    expect(kept.at(-1)?.text).toBe('ok 60');
  });

  it('gives prompts the same history as a store that keeps everything', async () => {
    const bounded = await converse(40, { store: createMemoryStore() });
    const unbounded = await converse(40, { store: createMemoryStore({ historyPerChannel: 10_000 }) });
    expect(bounded).toEqual(unbounded);
    // The last prompt read a full window: the 29 lines before the question, and the question.
    expect(lines(bounded.at(-1))).toHaveLength(DEFAULT_HISTORY_WINDOW);
  });

  it('keeps as many lines as historyLimit reads when the runtime makes its own store', async () => {
    const prompts = await converse(40, { historyLimit: 50 });
    // 39 questions and 39 answers before the 40th question: 50 lines read, 50 kept.
    expect(lines(prompts.at(-1))).toHaveLength(50);
  });

  it('refuses a historyLimit above what the given store keeps, saying how to fix it', () => {
    const create = () =>
      createRuntime({ avatars, logger: silentLogger(), store: createMemoryStore(), historyLimit: 50 });
    expect(create).toThrow(expect.objectContaining({ code: 'TROUPE_CONFIG_INVALID' }));
    expect(create).toThrow('historyPerChannel: 50');
  });
});
