/**
 * Compacting a profile near its size limit with a model: what the model is asked, when its answer
 * is kept (and the version says so), and when it is refused or fails, which leaves the profile to
 * be compacted by rule, the refusal kept beside the versions.
 */
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createMemoryStore } from '../../src/adapters/store/memory/memoryStore.js';
import { REFUSALS_KEY, readRefusals } from '../../src/email/memoryRefusals.js';
import { COMPACT_AT, COMPACT_TO, compactProfile, MAX_PROFILE } from '../../src/email/profileCompaction.js';
import { defaultResponsePreferences, profileText } from '../../src/email/profileValue.js';
import {
  defaultTriagePreferences,
  memoryNamespaces,
  PREFERENCES_KEY,
} from '../../src/email/triagePreferences.js';
import { createLogger } from '../../src/logging/logger.js';
import type { ObjectModel, ObjectRequest } from '../../src/ports/objectModel.js';

const namespace = memoryNamespaces.response;
const lessons = Array.from(
  { length: 200 },
  (_, i) => `- On replies to r${i}@acme.dev, the user said: ${'be brief '.repeat(10)}`,
);
const big = `${defaultResponsePreferences}\n${lessons.join('\n')}`;

function capturedLogger() {
  const lines: string[] = [];
  const logger = createLogger({
    level: 'info',
    destination: new Writable({
      write(chunk, _e, done) {
        lines.push(String(chunk));
        done();
      },
    }),
  });
  return { logger, text: () => lines.join('') };
}

function model(answer: () => { user_preferences: string; summary: string }) {
  const requests: ObjectRequest<never>[] = [];
  const m: ObjectModel = {
    id: 'test:compaction',
    async generateObject(request) {
      requests.push(request as never);
      return request.schema.parse(answer());
    },
  };
  return { model: m, requests };
}

async function stored(value: unknown, ns: string = namespace) {
  const store = createMemoryStore();
  const current = await store.memory.put(ns, PREFERENCES_KEY, value);
  return { store, current };
}

describe('compacting without a model', () => {
  it('is by rule, with no word of a model', async () => {
    const { store, current } = await stored(big);
    const { logger, text } = capturedLogger();
    const record = await compactProfile({ memory: store.memory, namespace, current, at: 1, logger });
    expect(record.source).toMatch(/^compacted by rule: /u);
    expect(text()).not.toContain('model');
  });
});

describe('compacting with a model', () => {
  it('asks for at most the target size, keeps an answer that fits as a version of its own, and says so', async () => {
    expect(big.length).toBeGreaterThan(COMPACT_AT);
    const { store, current } = await stored(big);
    const compacted = `${defaultResponsePreferences}\n- Keep replies brief for everyone at acme.dev.`;
    const { model: m, requests } = model(() => ({
      user_preferences: `  ${compacted}\n`,
      summary: ` ${'Merged. '.repeat(50)}`,
    }));
    const { logger, text } = capturedLogger();
    const record = await compactProfile({
      memory: store.memory,
      namespace,
      current,
      model: m,
      at: 7,
      logger,
    });
    expect(record).toMatchObject({ version: 2, value: compacted, at: 7 });
    expect(record.source).toBe(`compacted by model: ${'Merged. '.repeat(50).trim().slice(0, 300)}`);
    const request = requests[0];
    expect(request?.schemaName).toBe('user_preferences');
    expect(request?.prompt.system).toContain(
      `compact it to at most ${COMPACT_TO.toLocaleString('en')} characters`,
    );
    expect(request?.prompt.system).not.toContain('{max}');
    expect(request?.prompt.messages).toEqual([
      { role: 'user', content: `Profile (${namespace}):\n<profile>\n${big}\n</profile>` },
    ]);
    expect(text()).toContain('compacted the preferences');
    expect(await readRefusals(store.memory, namespace)).toEqual([]);
  });

  it('an answer still too long is refused and kept; the profile is compacted by rule instead', async () => {
    const { store, current } = await stored(big);
    const tooLong = `${defaultResponsePreferences}\n${lessons.slice(0, 150).join('\n')}`;
    expect(tooLong.length).toBeGreaterThan(COMPACT_TO);
    const { model: m } = model(() => ({ user_preferences: tooLong, summary: 'dropped a few' }));
    const { logger, text } = capturedLogger();
    const record = await compactProfile({
      memory: store.memory,
      namespace,
      current,
      model: m,
      at: 8,
      logger,
    });
    expect(record.source).toMatch(/^compacted by rule: dropped the \d+ oldest learned lines/u);
    expect(profileText(record.value).length).toBeLessThanOrEqual(COMPACT_TO);
    const [refusal] = await readRefusals(store.memory, namespace);
    expect(refusal?.value).toEqual({
      reason: `left ${tooLong.trim().length.toLocaleString('en')} characters (at most ${COMPACT_TO.toLocaleString('en')})`,
      kept: 1,
      kind: 'compaction',
    });
    expect(refusal?.source).toBe('refused compaction');
    expect(refusal?.at).toBe(8);
    expect(text()).toContain('refused the model’s compaction of the preferences');
  });

  it('an answer exactly at the target size is kept', async () => {
    const { store, current } = await stored(big);
    const exact = `${defaultResponsePreferences}\n- ${'k'.repeat(COMPACT_TO - defaultResponsePreferences.length - 3)}`;
    expect(exact.length).toBe(COMPACT_TO);
    const { model: m } = model(() => ({ user_preferences: exact, summary: 's' }));
    const record = await compactProfile({
      memory: store.memory,
      namespace,
      current,
      model: m,
      at: 1,
      logger: capturedLogger().logger,
    });
    expect(record.value).toBe(exact);
  });

  it('an answer that drops a heading is refused, even when it fits', async () => {
    const { store, current } = await stored(big);
    const { model: m } = model(() => ({ user_preferences: '- short', summary: 's' }));
    const record = await compactProfile({
      memory: store.memory,
      namespace,
      current,
      model: m,
      at: 1,
      logger: capturedLogger().logger,
    });
    expect(record.source).toMatch(/^compacted by rule: /u);
    const [refusal] = await readRefusals(store.memory, namespace);
    expect(refusal?.value.reason).toMatch(/^dropped or renamed the heading /u);
  });

  it('a model that fails leaves it to the rule, with a warning', async () => {
    const { store, current } = await stored(big);
    const failing: ObjectModel = {
      id: 'test:down',
      async generateObject() {
        throw new Error('model down');
      },
    };
    const { logger, text } = capturedLogger();
    const record = await compactProfile({
      memory: store.memory,
      namespace,
      current,
      model: failing,
      at: 1,
      logger,
    });
    expect(record.source).toMatch(/^compacted by rule: /u);
    expect(text()).toContain('the model could not compact the preferences; they are compacted by rule');
    expect(await readRefusals(store.memory, namespace)).toEqual([]);
  });
});

describe('the refusals kept', () => {
  it('are read newest first; a kept value that is not a refusal is left out', async () => {
    const store = createMemoryStore();
    await store.memory.put(namespace, REFUSALS_KEY, { reason: 'moved 1 line', kept: 3, kind: 'update' });
    await store.memory.put(namespace, REFUSALS_KEY, 'not a refusal');
    await store.memory.put(namespace, REFUSALS_KEY, {
      reason: 'dropped 40% of the lines',
      kept: 4,
      kind: 'update',
    });
    expect((await readRefusals(store.memory, namespace)).map((r) => r.value.reason)).toEqual([
      'dropped 40% of the lines',
      'moved 1 line',
    ]);
  });
});

describe('a triage profile', () => {
  it('stored past its schema’s limit is still its text, and compacting it keeps its rules', async () => {
    const instructions = `${defaultTriagePreferences.instructions}\n${Array.from({ length: 500 }, (_, i) => `- emails like “report ${i}” from r${i}@acme.dev`).join('\n')}`;
    const value = { instructions, rules: defaultTriagePreferences.rules };
    expect(instructions.length).toBeGreaterThan(MAX_PROFILE);
    expect(profileText(value)).toBe(instructions);
    const { store, current } = await stored(value, memoryNamespaces.triage);
    const record = await compactProfile({
      memory: store.memory,
      namespace: memoryNamespaces.triage,
      current,
      at: 1,
      logger: capturedLogger().logger,
    });
    expect(record.value).toMatchObject({ rules: defaultTriagePreferences.rules });
    expect(profileText(record.value).length).toBeLessThanOrEqual(COMPACT_TO);
    expect(profileText(record.value).startsWith('Ignore:')).toBe(true);
    // The default lines stay; the oldest learned ones go.
    for (const line of defaultTriagePreferences.instructions.split('\n'))
      expect(profileText(record.value)).toContain(line);
    expect(profileText(record.value)).not.toContain('“report 0”');
  });

  it('with no instructions to read, is read as the defaults', () => {
    expect(profileText({ instructions: '   ' })).toBe(defaultTriagePreferences.instructions);
    expect(profileText(null)).toBe(defaultTriagePreferences.instructions);
    expect(profileText({ instructions: 42 })).toBe(defaultTriagePreferences.instructions);
    expect(profileText('plain text')).toBe('plain text');
    expect(profileText({ instructions: '  Ignore:\n- x  ', rules: [] })).toBe('Ignore:\n- x');
  });
});
