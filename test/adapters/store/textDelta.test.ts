import { describe, expect, it } from 'vitest';
import { createMemoryStore } from '../../../src/adapters/store/memory/memoryStore.js';
import { applyDelta, deltaBetween, deltaSize } from '../../../src/adapters/store/memory/textDelta.js';
import { seededRandom } from '../../support/seededRandom.js';

describe('text deltas (old versions kept as differences)', () => {
  it('gives the older text back exactly, for any pair of texts', () => {
    const next = seededRandom(7);
    const alphabet = ['a', 'b', '\n', '\\n', 'é', '🙂', ' ', '"'];
    const text = () =>
      Array.from(
        { length: Math.floor(next() * 60) },
        () => alphabet[Math.floor(next() * alphabet.length)],
      ).join('');
    for (let i = 0; i < 2_000; i++) {
      const [newer, older] = [text(), text()];
      expect(applyDelta(newer, deltaBetween(newer, older))).toBe(older);
    }
  });

  it('gives the older text back exactly when the newer one kept most of it (cut, changed, added)', () => {
    const next = seededRandom(29);
    const alphabet = ['a', 'b', '\n', '\\n', '\\', 'n', 'é', '🙂', ' ', '"'];
    const text = (n: number) =>
      Array.from({ length: n }, () => alphabet[Math.floor(next() * alphabet.length)]).join('');
    for (let i = 0; i < 3_000; i++) {
      const older = text(Math.floor(next() * 200));
      const cut = Math.floor(next() * older.length * 0.3);
      const keep = older.length - Math.floor(next() * older.length * 0.2);
      const newer = text(Math.floor(next() * 10)) + older.slice(cut, keep) + text(Math.floor(next() * 30));
      const delta = deltaBetween(newer, older);
      expect(applyDelta(newer, delta), JSON.stringify({ newer, older })).toBe(older);
    }
  });

  it('keeps a profile that learned one line, and lost its first to a length cap, in a small delta', () => {
    const lines = Array.from(
      { length: 200 },
      (_, i) => `- emails like “subject ${i}” from sender${i}@example.com`,
    );
    const older = JSON.stringify({ instructions: lines.join('\n') });
    const newer = JSON.stringify({ instructions: `${lines.slice(1).join('\n')}\n- one more line` });
    const delta = deltaBetween(newer, older);
    expect(applyDelta(newer, delta)).toBe(older);
    expect(deltaSize(delta)).toBeLessThan(older.length / 20);
  });
});

describe('the memory store keeps every version readable', () => {
  it('after 300 updates, each version reads back as written (history and its order)', async () => {
    const store = createMemoryStore();
    const next = seededRandom(11);
    const written: unknown[] = [];
    let lines = ['## Ignore', '- newsletters', '## Respond', '- questions'];
    for (let v = 1; v <= 300; v++) {
      const at = Math.floor(next() * lines.length);
      if (next() < 0.7) lines.splice(at, 0, `- learned ${v}: “${'x'.repeat(Math.floor(next() * 40))}”`);
      else lines.splice(at, 1);
      lines = lines.slice(-120);
      const value =
        v % 5 === 0 ? { rules: { ignore: [`s${v}`] }, instructions: lines.join('\n') } : lines.join('\n');
      written.push(value);
      await store.memory.put('ns', 'k', value, { expectedVersion: v - 1, source: `v${v}` });
    }
    const history = await store.memory.history('ns', 'k', 1_000);
    expect(history.map((r) => r.version)).toEqual(Array.from({ length: 300 }, (_, i) => 300 - i));
    expect(history.map((r) => r.value)).toEqual([...written].reverse());
    expect(history.map((r) => r.source)).toEqual(written.map((_, i) => `v${i + 1}`).reverse());
    expect((await store.memory.get('ns', 'k'))?.value).toEqual(written.at(-1));
    expect((await store.memory.history('ns', 'k', 3)).map((r) => r.value)).toEqual(
      written.slice(-3).reverse(),
    );
  });

  it('reads back every version whatever the changes: slid, edited, rewritten, of another type', async () => {
    const store = createMemoryStore();
    const next = seededRandom(41);
    const bits = ['é', '😀', '\\n', '\\\\n', '\n', '"', '\\', ' ', '\u2028', 'line', ''];
    const bit = () => bits[Math.floor(next() * bits.length)] as string;
    const line = (v: number) => `- fact ${v} ${bit()}${bit()}${bit()} ${'w'.repeat(Math.floor(next() * 30))}`;
    const written: unknown[] = [];
    let lines: string[] = [];
    for (let v = 1; v <= 400; v++) {
      const change = next();
      if (change < 0.35) lines.push(line(v));
      else if (change < 0.55) lines = [...lines.slice(1), line(v)];
      else if (change < 0.7 && lines.length > 0) lines[Math.floor(next() * lines.length)] = line(v);
      else if (change < 0.75) lines = [`${'long '.repeat(400)}${bit()}`];
      else if (change < 0.8) lines = [];
      else lines.splice(Math.floor(next() * (lines.length + 1)), 0, bit());
      const text = lines.join(next() < 0.5 ? '\n' : '\\n');
      const shapes = [text, { profile: text, n: v }, [...lines], [{ t: text }], text.length, null, ''];
      const value = shapes[v % 9 < 3 ? 0 : Math.floor(next() * shapes.length)];
      written.push(value);
      await store.memory.put('ns', 'k', value, { expectedVersion: v - 1 });
    }
    const newestFirst = [...written].reverse();
    for (const limit of [1, 2, 17, 399, 400, 1_000])
      expect((await store.memory.history('ns', 'k', limit)).map((r) => r.value)).toEqual(
        newestFirst.slice(0, limit),
      );
    expect((await store.memory.get('ns', 'k'))?.value).toEqual(written.at(-1));
    expect((await store.memory.list('ns')).map((r) => [r.version, r.value])).toEqual([[400, written.at(-1)]]);
  });
});
