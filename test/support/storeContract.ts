/**
 * The behaviour every `TroupeStore` adapter promises (memory, SQLite, MongoDB): one suite, run
 * against each. It compiles against the port only. Every test uses its own collection, namespace,
 * stream, counter, scope, channel and outbox keys, so a shared server (or a file reused across
 * runs) works; nothing here assumes an empty store.
 *
 * Lifecycle: `open()` is called before each test and the store it returns is closed after it
 * (closing twice must be harmless). With `reopen`, the durability test closes the store and then
 * calls `reopen(closedStore)`, which must open a new store on the same data.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { HistoryEntry } from '../../src/ports/history.js';
import type { OutboxEntry } from '../../src/ports/outbox.js';
import type { OutgoingResponse } from '../../src/ports/outgoingResponse.js';
import type { SentPart } from '../../src/ports/routingOutcome.js';
import type { StoredDocument, TroupeStore } from '../../src/ports/store.js';

export interface StoreContractOptions {
  /** Opens a new store on the data of `closed` (already closed by the suite). */
  reopen?: (closed: TroupeStore) => Promise<TroupeStore>;
}

/** A name no other test (or earlier run against a shared server) uses. */
export function uniqueName(prefix: string): string {
  return `${prefix}-${randomUUID().slice(0, 13)}`;
}

/** Resolves with the rejection's `code` (fails the test if the promise resolves). */
async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    return String((error as { code?: unknown }).code);
  }
  throw new Error('expected the operation to be rejected, but it resolved');
}

/** The rejection itself (fails the test if the promise resolves). */
async function rejectionOf(
  promise: Promise<unknown>,
): Promise<Error & { code?: string; retryable?: boolean }> {
  try {
    await promise;
  } catch (error) {
    return error as Error & { code?: string; retryable?: boolean };
  }
  throw new Error('expected the operation to be rejected, but it resolved');
}

function response(key: string, overrides: Partial<OutgoingResponse> = {}): OutgoingResponse {
  return {
    idempotencyKey: key,
    channel: { kind: 'terminal', id: 'room-1' },
    speaker: { avatarId: 'av-luna', name: 'Luna', emoji: '🌙' },
    text: 'Hello, stargazer! ✨',
    attachments: [{ name: 'map.txt', mediaType: 'text/plain', dataBase64: 'aGVsbG8=' }],
    replyTo: { messageId: 'm-1' },
    origin: { kind: 'answer', turnId: 't-1', avatarId: 'av-luna', triggerMessageId: 'm-1' },
    preparedAt: 1_000,
    ...overrides,
  };
}

function part(index: number, messageId = `msg-${index}`): SentPart {
  return { index, kind: 'text', messageId, attempts: 1 };
}

function line(channelId: string, n: number, at = 1_000 + n): HistoryEntry {
  return {
    channelId,
    messageId: `m-${n}`,
    at,
    author:
      n % 2 === 0
        ? { kind: 'human', id: 'u-1', name: 'Ada' }
        : { kind: 'avatar', id: 'av-luna', name: 'Luna' },
    text: `line ${n}`,
  };
}

const keysOf = (docs: StoredDocument[]): string[] => docs.map((d) => d.key);

/** Values that are not JSON and must be refused before anything is written. */
function invalidValues(): [string, unknown][] {
  const cycle: Record<string, unknown> = { a: 1 };
  cycle.self = cycle;
  const deepCycle: unknown[] = [];
  deepCycle.push({ inner: [deepCycle] });
  return [
    ['a function', () => 1],
    ['undefined', undefined],
    ['NaN', Number.NaN],
    ['Infinity', Number.POSITIVE_INFINITY],
    ['-Infinity in an array', [1, Number.NEGATIVE_INFINITY]],
    ['NaN nested in an object', { a: { b: Number.NaN } }],
    ['a cycle', cycle],
    ['a cycle through arrays', deepCycle],
    ['a BigInt', 10n],
    ['a nested BigInt', { count: 2n }],
    ['a symbol', Symbol('s')],
    ['a nested function', { run: () => 1 }],
    ['undefined in an array', [1, undefined, 3]],
    ['a Date', new Date(0)],
    ['a Map', new Map([['a', 1]])],
    // JSON.stringify stores what toJSON returns, not the value: refused, as a Date is.
    ['an array with its own toJSON', Object.assign([1], { toJSON: () => 'x' })],
    [
      'an object with a hidden toJSON',
      Object.defineProperty({ a: 1 }, 'toJSON', { value: () => 'x', enumerable: false }),
    ],
  ];
}

/** Declares the contract suite for one adapter. */
export function describeStoreContract(
  name: string,
  open: () => Promise<TroupeStore>,
  options: StoreContractOptions = {},
): void {
  describe(`TroupeStore contract: ${name}`, () => {
    let store: TroupeStore;

    beforeEach(async () => {
      store = await open();
    });

    afterEach(async () => {
      await store.close();
    });

    describe('documents: compare-and-set', () => {
      it('creates a document at version 1 and reads it back with its write time', async () => {
        const c = uniqueName('docs');
        expect(await store.documents.get(c, 'missing')).toBeUndefined();
        const version = await store.documents.put(c, 'k1', { hello: 'world', n: [1, 2, 3] }, { at: 5_000 });
        expect(version).toBe(1);
        expect(await store.documents.get(c, 'k1')).toEqual({
          collection: c,
          key: 'k1',
          value: { hello: 'world', n: [1, 2, 3] },
          version: 1,
          updatedAt: 5_000,
        });
      });

      it('stamps writes with the current time when no `at` is given', async () => {
        const c = uniqueName('docs');
        const before = Date.now();
        await store.documents.put(c, 'k', 1);
        const after = Date.now();
        const doc = await store.documents.get(c, 'k');
        expect(doc?.updatedAt).toBeGreaterThanOrEqual(before);
        expect(doc?.updatedAt).toBeLessThanOrEqual(after);
      });

      it('increments the version on every unconditional write', async () => {
        const c = uniqueName('docs');
        expect(await store.documents.put(c, 'k', 'a')).toBe(1);
        expect(await store.documents.put(c, 'k', 'b')).toBe(2);
        expect(await store.documents.put(c, 'k', 'c', { at: 9 })).toBe(3);
        expect(await store.documents.get(c, 'k')).toMatchObject({ value: 'c', version: 3, updatedAt: 9 });
      });

      it('creates with expectedVersion 0 and refuses a second create', async () => {
        const c = uniqueName('docs');
        expect(await store.documents.put(c, 'k', { v: 'first' }, { expectedVersion: 0, at: 1 })).toBe(1);
        const error = await rejectionOf(
          store.documents.put(c, 'k', { v: 'second' }, { expectedVersion: 0, at: 2 }),
        );
        expect(error.code).toBe('TROUPE_STORE_CONFLICT');
        expect(error.message).toContain(c);
        expect(error.message).toContain('k');
        expect(await store.documents.get(c, 'k')).toEqual({
          collection: c,
          key: 'k',
          value: { v: 'first' },
          version: 1,
          updatedAt: 1,
        });
      });

      it('updates with the matching version and refuses a stale one, changing nothing', async () => {
        const c = uniqueName('docs');
        await store.documents.put(c, 'k', { step: 1 }, { at: 10 });
        expect(await store.documents.put(c, 'k', { step: 2 }, { expectedVersion: 1, at: 20 })).toBe(2);
        const error = await rejectionOf(
          store.documents.put(c, 'k', { step: 'stale' }, { expectedVersion: 1, at: 30 }),
        );
        expect(error.code).toBe('TROUPE_STORE_CONFLICT');
        expect(error.message).toContain(c);
        expect(error.message).toContain('1');
        expect(error.message).toContain('2');
        expect(await store.documents.get(c, 'k')).toMatchObject({
          value: { step: 2 },
          version: 2,
          updatedAt: 20,
        });
        expect(await store.documents.put(c, 'k', { step: 3 }, { expectedVersion: 2 })).toBe(3);
      });

      it('refuses an update of a document that does not exist', async () => {
        const c = uniqueName('docs');
        expect(await codeOf(store.documents.put(c, 'ghost', 1, { expectedVersion: 3 }))).toBe(
          'TROUPE_STORE_CONFLICT',
        );
        expect(await store.documents.get(c, 'ghost')).toBeUndefined();
      });

      it('lets exactly one of many concurrent creates win', async () => {
        const c = uniqueName('docs');
        const results = await Promise.allSettled(
          Array.from({ length: 10 }, (_, i) =>
            store.documents.put(c, 'race', { writer: i }, { expectedVersion: 0 }),
          ),
        );
        const won = results.filter((r) => r.status === 'fulfilled');
        const lost = results.filter((r) => r.status === 'rejected');
        expect(won).toHaveLength(1);
        expect(lost).toHaveLength(9);
        for (const r of lost) expect((r.reason as { code?: string }).code).toBe('TROUPE_STORE_CONFLICT');
        expect((await store.documents.get(c, 'race'))?.version).toBe(1);
      });

      it('gives concurrent unconditional writes distinct versions', async () => {
        const c = uniqueName('docs');
        const versions = await Promise.all(
          Array.from({ length: 20 }, (_, i) => store.documents.put(c, 'k', i)),
        );
        expect([...versions].sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
        expect((await store.documents.get(c, 'k'))?.version).toBe(20);
      });

      it('keeps collections apart', async () => {
        const a = uniqueName('docs');
        const b = uniqueName('docs');
        await store.documents.put(a, 'k', 'in a');
        expect(await store.documents.get(b, 'k')).toBeUndefined();
        expect(await store.documents.put(b, 'k', 'in b', { expectedVersion: 0 })).toBe(1);
        expect((await store.documents.get(a, 'k'))?.value).toBe('in a');
      });
    });

    describe('documents: putMany', () => {
      it('writes a batch and returns the new versions in order', async () => {
        const c = uniqueName('batch');
        await store.documents.put(c, 'b', 'old b');
        const versions = await store.documents.putMany(
          c,
          [
            { key: 'a', value: { n: 1 }, expectedVersion: 0 },
            { key: 'b', value: { n: 2 }, expectedVersion: 1 },
            { key: 'c', value: { n: 3 } },
          ],
          77,
        );
        expect(versions).toEqual([1, 2, 1]);
        const docs = await store.documents.list(c);
        expect(docs.map((d) => [d.key, d.value, d.version, d.updatedAt])).toEqual([
          ['a', { n: 1 }, 1, 77],
          ['b', { n: 2 }, 2, 77],
          ['c', { n: 3 }, 1, 77],
        ]);
      });

      it('accepts an empty batch', async () => {
        expect(await store.documents.putMany(uniqueName('batch'), [])).toEqual([]);
      });

      it('applies none of the batch when one write conflicts', async () => {
        const c = uniqueName('batch');
        await store.documents.put(c, 'x', 'x1', { at: 1 });
        await store.documents.put(c, 'y', 'y1', { at: 1 });
        const error = await rejectionOf(
          store.documents.putMany(
            c,
            [
              { key: 'new', value: 'should not exist', expectedVersion: 0 },
              { key: 'x', value: 'x2', expectedVersion: 1 },
              { key: 'y', value: 'y2', expectedVersion: 5 },
              { key: 'z', value: 'z1' },
            ],
            2,
          ),
        );
        expect(error.code).toBe('TROUPE_STORE_CONFLICT');
        expect(error.message).toContain('y');
        expect(await store.documents.get(c, 'new')).toBeUndefined();
        expect(await store.documents.get(c, 'z')).toBeUndefined();
        expect(await store.documents.get(c, 'x')).toMatchObject({ value: 'x1', version: 1, updatedAt: 1 });
        expect(await store.documents.get(c, 'y')).toMatchObject({ value: 'y1', version: 1, updatedAt: 1 });
      });

      it('applies none of the batch when one value is not JSON', async () => {
        const c = uniqueName('batch');
        await store.documents.put(c, 'x', 'x1');
        const code = await codeOf(
          store.documents.putMany<unknown>(c, [
            { key: 'x', value: 'x2' },
            { key: 'bad', value: { when: Number.NaN } },
          ]),
        );
        expect(code).toBe('TROUPE_STORE_INVALID_VALUE');
        expect(await store.documents.get(c, 'bad')).toBeUndefined();
        expect(await store.documents.get(c, 'x')).toMatchObject({ value: 'x1', version: 1 });
      });
    });

    describe('documents: batch', () => {
      it('writes and deletes across collections at once, returning versions and deletions in order', async () => {
        const inbox = uniqueName('inbox');
        const answered = uniqueName('answered');
        await store.documents.put(inbox, 'i1', { status: 'pending' });
        await store.documents.put(answered, 'old', 'x');
        const results = await store.documents.batch(
          [
            { op: 'put', collection: answered, key: 'i1', value: { status: 'answered' }, expectedVersion: 0 },
            { op: 'delete', collection: inbox, key: 'i1' },
            { op: 'delete', collection: inbox, key: 'never-there' },
            { op: 'put', collection: answered, key: 'old', value: 'y', expectedVersion: 1 },
          ],
          55,
        );
        expect(results).toEqual([1, true, false, 2]);
        expect(await store.documents.get(inbox, 'i1')).toBeUndefined();
        expect(await store.documents.get(answered, 'i1')).toMatchObject({
          value: { status: 'answered' },
          version: 1,
          updatedAt: 55,
        });
        expect(await store.documents.get(answered, 'old')).toMatchObject({ value: 'y', version: 2 });
        expect(await store.documents.batch([])).toEqual([]);
      });

      it('sees its own earlier operations: a delete then a create starts again at version 1', async () => {
        const c = uniqueName('batch');
        await store.documents.put(c, 'k', 'a');
        await store.documents.put(c, 'k', 'b');
        const results = await store.documents.batch([
          { op: 'delete', collection: c, key: 'k', expectedVersion: 2 },
          { op: 'put', collection: c, key: 'k', value: 'c', expectedVersion: 0 },
        ]);
        expect(results).toEqual([true, 1]);
        expect(await store.documents.get(c, 'k')).toMatchObject({ value: 'c', version: 1 });
      });

      it('skips a delete of another version without failing the batch', async () => {
        const c = uniqueName('batch');
        await store.documents.put(c, 'k', 'a');
        expect(
          await store.documents.batch([
            { op: 'delete', collection: c, key: 'k', expectedVersion: 7 },
            { op: 'put', collection: c, key: 'other', value: 1 },
          ]),
        ).toEqual([false, 1]);
        expect(await store.documents.get(c, 'k')).toMatchObject({ value: 'a', version: 1 });
      });

      it('applies nothing when one write conflicts, deletes included', async () => {
        const inbox = uniqueName('inbox');
        const emails = uniqueName('emails');
        await store.documents.put(inbox, 'i1', 'pending', { at: 1 });
        await store.documents.put(emails, 'e1', 'v1', { at: 1 });
        await store.documents.put(emails, 'e1', 'v2', { at: 1 });
        const error = await rejectionOf(
          store.documents.batch([
            { op: 'delete', collection: inbox, key: 'i1' },
            { op: 'put', collection: inbox, key: 'i2', value: 'new', expectedVersion: 0 },
            { op: 'put', collection: emails, key: 'e1', value: 'stale', expectedVersion: 1 },
          ]),
        );
        expect(error.code).toBe('TROUPE_STORE_CONFLICT');
        expect(error.message).toContain('e1');
        expect(await store.documents.get(inbox, 'i1')).toMatchObject({ value: 'pending', version: 1 });
        expect(await store.documents.get(inbox, 'i2')).toBeUndefined();
        expect(await store.documents.get(emails, 'e1')).toMatchObject({ value: 'v2', version: 2 });
      });

      it('applies nothing when one value is not JSON', async () => {
        const c = uniqueName('batch');
        await store.documents.put(c, 'x', 'x1');
        const code = await codeOf(
          store.documents.batch([
            { op: 'delete', collection: c, key: 'x' },
            { op: 'put', collection: c, key: 'bad', value: { when: Number.NaN } },
          ]),
        );
        expect(code).toBe('TROUPE_STORE_INVALID_VALUE');
        expect(await store.documents.get(c, 'x')).toMatchObject({ value: 'x1', version: 1 });
        expect(await store.documents.get(c, 'bad')).toBeUndefined();
      });
    });

    describe('documents: delete', () => {
      it('deletes and reports whether the document existed', async () => {
        const c = uniqueName('del');
        await store.documents.put(c, 'k', 1);
        expect(await store.documents.delete(c, 'k')).toBe(true);
        expect(await store.documents.get(c, 'k')).toBeUndefined();
        expect(await store.documents.delete(c, 'k')).toBe(false);
        expect(await store.documents.delete(c, 'never')).toBe(false);
      });

      it('deletes with expectedVersion only when the version matches', async () => {
        const c = uniqueName('del');
        await store.documents.put(c, 'k', 'v1');
        await store.documents.put(c, 'k', 'v2');
        expect(await store.documents.delete(c, 'k', { expectedVersion: 1 })).toBe(false);
        expect(await store.documents.get(c, 'k')).toMatchObject({ value: 'v2', version: 2 });
        expect(await store.documents.delete(c, 'k', { expectedVersion: 2 })).toBe(true);
        expect(await store.documents.get(c, 'k')).toBeUndefined();
        expect(await store.documents.delete(c, 'missing', { expectedVersion: 1 })).toBe(false);
      });

      it('starts again at version 1 after a delete', async () => {
        const c = uniqueName('del');
        await store.documents.put(c, 'k', 'old');
        await store.documents.put(c, 'k', 'older');
        await store.documents.delete(c, 'k');
        expect(await store.documents.put(c, 'k', 'new', { expectedVersion: 0 })).toBe(1);
      });
    });

    describe('documents: list', () => {
      it('lists a collection in key order, with its values and versions', async () => {
        const c = uniqueName('list');
        for (const key of ['b', 'a/2', 'c', 'a', 'a/1', 'b/1'])
          await store.documents.put(c, key, { key }, { at: 3 });
        await store.documents.put(c, 'c', { key: 'c', again: true }, { at: 4 });
        await store.documents.put(uniqueName('other'), 'a/0', 'elsewhere');
        const docs = await store.documents.list(c);
        expect(keysOf(docs)).toEqual(['a', 'a/1', 'a/2', 'b', 'b/1', 'c']);
        expect(docs[5]).toEqual({
          collection: c,
          key: 'c',
          value: { key: 'c', again: true },
          version: 2,
          updatedAt: 4,
        });
        expect(await store.documents.list(uniqueName('empty'))).toEqual([]);
      });

      it('pages with limit and afterKey', async () => {
        const c = uniqueName('list');
        const keys = Array.from({ length: 25 }, (_, i) => `key-${String(i).padStart(2, '0')}`);
        for (const key of [...keys].reverse()) await store.documents.put(c, key, key);
        const seen: string[] = [];
        let afterKey: string | undefined;
        for (;;) {
          const page = await store.documents.list(c, {
            limit: 10,
            ...(afterKey !== undefined ? { afterKey } : {}),
          });
          expect(page.length).toBeLessThanOrEqual(10);
          if (page.length === 0) break;
          seen.push(...keysOf(page));
          afterKey = page[page.length - 1]?.key;
        }
        expect(seen).toEqual(keys);
        expect(keysOf(await store.documents.list(c, { afterKey: 'key-23' }))).toEqual(['key-24']);
        expect(keysOf(await store.documents.list(c, { afterKey: 'key-05x', limit: 2 }))).toEqual([
          'key-06',
          'key-07',
        ]);
        expect(keysOf(await store.documents.list(c, { limit: 1 }))).toEqual(['key-00']);
      });

      it('filters by key prefix, literally (no wildcards or patterns)', async () => {
        const c = uniqueName('list');
        const keys = [
          'a',
          'a%b',
          'a.b',
          'a.c',
          'a_b',
          'ab',
          'a[b',
          'a*b',
          'b.a',
          'a.',
          'x/y/1',
          'x/y/2',
          'x/z',
        ];
        for (const key of keys) await store.documents.put(c, key, key);
        expect(keysOf(await store.documents.list(c, { keyPrefix: 'a.' }))).toEqual(['a.', 'a.b', 'a.c']);
        expect(keysOf(await store.documents.list(c, { keyPrefix: 'a%' }))).toEqual(['a%b']);
        expect(keysOf(await store.documents.list(c, { keyPrefix: 'a_' }))).toEqual(['a_b']);
        expect(keysOf(await store.documents.list(c, { keyPrefix: 'a[' }))).toEqual(['a[b']);
        expect(keysOf(await store.documents.list(c, { keyPrefix: 'a*' }))).toEqual(['a*b']);
        expect(keysOf(await store.documents.list(c, { keyPrefix: 'x/y/' }))).toEqual(['x/y/1', 'x/y/2']);
        expect(keysOf(await store.documents.list(c, { keyPrefix: 'x/y/', afterKey: 'x/y/1' }))).toEqual([
          'x/y/2',
        ]);
        expect(keysOf(await store.documents.list(c, { keyPrefix: 'x/', limit: 2 }))).toEqual([
          'x/y/1',
          'x/y/2',
        ]);
        expect(keysOf(await store.documents.list(c, { keyPrefix: 'nothing' }))).toEqual([]);
        expect(await store.documents.list(c, { keyPrefix: '' })).toHaveLength(keys.length);
      });

      it('orders keys by Unicode code point, and pages consistently with that order', async () => {
        const c = uniqueName('list');
        // Code point order: z < é < 中 < ｚ (U+FF5A) < 🎭 (U+1F3AD). UTF-16 order would put 🎭 first.
        const keys = ['🎭', 'ｚ', '中', 'é', 'z', 'A'];
        for (const key of keys) await store.documents.put(c, key, key);
        expect(keysOf(await store.documents.list(c))).toEqual(['A', 'z', 'é', '中', 'ｚ', '🎭']);
        expect(keysOf(await store.documents.list(c, { afterKey: 'ｚ' }))).toEqual(['🎭']);
        expect(keysOf(await store.documents.list(c, { keyPrefix: '🎭' }))).toEqual(['🎭']);
      });
    });

    describe('documents: expireIdle', () => {
      it('deletes documents not written since the cut-off, in that collection only', async () => {
        const c = uniqueName('idle');
        const other = uniqueName('idle');
        await store.documents.put(c, 'old', 1, { at: 1_000 });
        await store.documents.put(c, 'edge', 2, { at: 2_000 });
        await store.documents.put(c, 'new', 3, { at: 3_000 });
        await store.documents.put(c, 'refreshed', 4, { at: 500 });
        await store.documents.put(c, 'refreshed', 5, { at: 2_500 });
        await store.documents.put(other, 'old', 1, { at: 1_000 });
        expect(await store.documents.expireIdle(c, 2_000)).toBe(1);
        expect(keysOf(await store.documents.list(c))).toEqual(['edge', 'new', 'refreshed']);
        expect(await store.documents.get(other, 'old')).toBeDefined();
        expect(await store.documents.expireIdle(c, 2_000)).toBe(0);
        expect(await store.documents.expireIdle(c, 10_000)).toBe(3);
        expect(await store.documents.list(c)).toEqual([]);
        expect(await store.documents.expireIdle(uniqueName('empty'), 10_000)).toBe(0);
      });
    });

    describe('documents: values', () => {
      it('isolates stored values from the caller (deep copies in and out)', async () => {
        const c = uniqueName('copy');
        const value = { nested: { list: [1, { deep: 'x' }] }, tags: ['a'] };
        await store.documents.put(c, 'k', value);
        value.nested.list.push(99);
        value.tags[0] = 'changed';
        const first = await store.documents.get<typeof value>(c, 'k');
        expect(first?.value).toEqual({ nested: { list: [1, { deep: 'x' }] }, tags: ['a'] });
        if (!first) throw new Error('missing');
        first.value.tags.push('mutated');
        (first.value.nested.list[1] as { deep: string }).deep = 'mutated';
        const listed = await store.documents.list<typeof value>(c);
        listed[0]?.value.tags.push('mutated too');
        const batch = [{ key: 'b', value: { inner: { n: 1 } } }];
        await store.documents.putMany(c, batch);
        // biome-ignore lint/style/noNonNullAssertion: the batch has one write
        batch[0]!.value.inner.n = 2;
        expect((await store.documents.get(c, 'k'))?.value).toEqual({
          nested: { list: [1, { deep: 'x' }] },
          tags: ['a'],
        });
        expect((await store.documents.get(c, 'b'))?.value).toEqual({ inner: { n: 1 } });
      });

      it("never modifies the caller's value", async () => {
        const c = uniqueName('copy');
        const value = { a: 1, nested: { b: [2] } };
        await store.documents.put(c, 'k', value);
        await store.documents.putMany(c, [{ key: 'k2', value }]);
        expect(value).toStrictEqual({ a: 1, nested: { b: [2] } });
        expect(Object.keys(value)).toEqual(['a', 'nested']);
      });

      it('stores every kind of JSON value', async () => {
        const c = uniqueName('json');
        const values: [string, unknown][] = [
          ['null', null],
          ['true', true],
          ['false', false],
          ['zero', 0],
          ['int', Number.MAX_SAFE_INTEGER],
          ['neg', -42.5],
          ['float', 0.1 + 0.2],
          ['tiny', 5e-324],
          ['huge', 1.7976931348623157e308],
          ['string', 'plain'],
          ['empty string', ''],
          ['empty object', {}],
          ['empty array', []],
          ['nested', { a: [{ b: [null, true, 'x', 1.5] }], c: { d: {} } }],
          ['odd keys', { 'a.b': 1, $where: 2, '': 3, 'with space': 4, '🎭': 5 }],
        ];
        for (const [key, value] of values) await store.documents.put(c, key, value);
        for (const [key, value] of values)
          expect((await store.documents.get(c, key))?.value).toStrictEqual(value);
      });

      it('drops object properties that are undefined, as JSON does', async () => {
        const c = uniqueName('json');
        await store.documents.put(c, 'k', {
          kept: 1,
          dropped: undefined,
          nested: { gone: undefined, here: 2 },
        });
        const value = (await store.documents.get<Record<string, unknown>>(c, 'k'))?.value;
        expect(value).toStrictEqual({ kept: 1, nested: { here: 2 } });
        expect(value && 'dropped' in value).toBe(false);
      });

      it('keeps unicode text exactly, in keys and values', async () => {
        const c = uniqueName('unicode');
        const text =
          'Zoë says 你好 — مرحبا 👋🏽 🇳🇿 \u0000 nul, \u2028 line sep, "quotes" \\ back\nslash\ttab \ud83d lone';
        const key = 'ключ/🎭/é';
        await store.documents.put(c, key, { text, [text]: 'as a key' });
        const doc = await store.documents.get<Record<string, string>>(c, key);
        expect(doc?.key).toBe(key);
        expect(doc?.value).toStrictEqual({ text, [text]: 'as a key' });
        expect(keysOf(await store.documents.list(c, { keyPrefix: 'ключ/' }))).toEqual([key]);
      });

      it('stores large values (1 MB of JSON and a 10 000-item array)', async () => {
        const c = uniqueName('large');
        const big = { blob: 'x'.repeat(1024 * 1024), tail: 'end' };
        const many = Array.from({ length: 10_000 }, (_, i) => ({ i, label: `item ${i}`, odd: i % 2 === 1 }));
        await store.documents.put(c, 'big', big);
        await store.documents.put(c, 'many', many);
        const gotBig = await store.documents.get<typeof big>(c, 'big');
        expect(gotBig?.value.blob.length).toBe(1024 * 1024);
        expect(gotBig?.value.tail).toBe('end');
        expect((await store.documents.get(c, 'many'))?.value).toStrictEqual(many);
      });

      it('rejects values that are not JSON, before writing anything', async () => {
        const c = uniqueName('invalid');
        await store.documents.put(c, 'existing', { ok: true });
        for (const [label, value] of invalidValues()) {
          const error = await rejectionOf(store.documents.put(c, 'new', value));
          expect(error.code, label).toBe('TROUPE_STORE_INVALID_VALUE');
          expect(error.retryable, label).toBe(false);
          expect(await codeOf(store.documents.put(c, 'existing', value, { expectedVersion: 1 })), label).toBe(
            'TROUPE_STORE_INVALID_VALUE',
          );
        }
        expect(await store.documents.get(c, 'new')).toBeUndefined();
        expect(await store.documents.get(c, 'existing')).toMatchObject({ value: { ok: true }, version: 1 });
      });
      it('rejects times and versions that are not finite numbers, before writing anything', async () => {
        const c = uniqueName('invalid');
        for (const n of [Number.NaN, Number.POSITIVE_INFINITY]) {
          const invalid = 'TROUPE_STORE_INVALID_VALUE';
          expect(await codeOf(store.documents.put(c, 'k', 1, { at: n }))).toBe(invalid);
          expect(await codeOf(store.documents.put(c, 'k', 1, { expectedVersion: n }))).toBe(invalid);
          expect(await codeOf(store.documents.putMany(c, [{ key: 'k', value: 1 }], n))).toBe(invalid);
          expect(await codeOf(store.memory.put(c, 'k', 1, { at: n }))).toBe(invalid);
          expect(await codeOf(store.events.append(c, {}, n))).toBe(invalid);
          expect(await codeOf(store.events.increment(c, n))).toBe(invalid);
          expect(await codeOf(store.processed.markProcessed(c, 'id', n))).toBe(invalid);
        }
        expect(await store.documents.get(c, 'k')).toBeUndefined();
        expect(await store.memory.get(c, 'k')).toBeUndefined();
        expect(await store.events.read(c)).toEqual([]);
        expect(await store.events.counter(c)).toBe(0);
        expect(await store.processed.isProcessed(c, 'id')).toBe(false);
      });
    });

    describe('memory: versioned', () => {
      it('keeps every write as a new version and reads the latest', async () => {
        const ns = uniqueName('mem');
        expect(await store.memory.get(ns, 'tone')).toBeUndefined();
        const first = await store.memory.put(ns, 'tone', { style: 'formal' }, { at: 10, source: 'seed' });
        expect(first).toEqual({
          namespace: ns,
          key: 'tone',
          value: { style: 'formal' },
          version: 1,
          at: 10,
          source: 'seed',
        });
        const second = await store.memory.put(ns, 'tone', { style: 'casual' }, { at: 20 });
        expect(second).toMatchObject({
          namespace: ns,
          key: 'tone',
          value: { style: 'casual' },
          version: 2,
          at: 20,
        });
        expect(second.source).toBeUndefined();
        expect(await store.memory.get(ns, 'tone')).toMatchObject({
          value: { style: 'casual' },
          version: 2,
          at: 20,
        });
      });

      it('stamps versions with the current time when no `at` is given', async () => {
        const ns = uniqueName('mem');
        const before = Date.now();
        const record = await store.memory.put(ns, 'k', 1);
        expect(record.at).toBeGreaterThanOrEqual(before);
        expect(record.at).toBeLessThanOrEqual(Date.now());
      });

      it('returns the history of a key newest first, with a limit', async () => {
        const ns = uniqueName('mem');
        for (let i = 1; i <= 5; i++)
          await store.memory.put(ns, 'k', { i }, { at: i * 100, source: `writer-${i}` });
        await store.memory.put(ns, 'other', 'x');
        const history = await store.memory.history<{ i: number }>(ns, 'k');
        expect(history.map((r) => [r.version, r.value.i, r.at, r.source])).toEqual([
          [5, 5, 500, 'writer-5'],
          [4, 4, 400, 'writer-4'],
          [3, 3, 300, 'writer-3'],
          [2, 2, 200, 'writer-2'],
          [1, 1, 100, 'writer-1'],
        ]);
        expect((await store.memory.history(ns, 'k', 2)).map((r) => r.version)).toEqual([5, 4]);
        expect(await store.memory.history(ns, 'nothing')).toEqual([]);
      });

      it('writes with compare-and-set against the latest version', async () => {
        const ns = uniqueName('mem');
        expect((await store.memory.put(ns, 'k', 'a', { expectedVersion: 0 })).version).toBe(1);
        const error = await rejectionOf(store.memory.put(ns, 'k', 'b', { expectedVersion: 0 }));
        expect(error.code).toBe('TROUPE_STORE_CONFLICT');
        expect(error.message).toContain(ns);
        expect(await codeOf(store.memory.put(ns, 'k', 'c', { expectedVersion: 2 }))).toBe(
          'TROUPE_STORE_CONFLICT',
        );
        expect((await store.memory.put(ns, 'k', 'd', { expectedVersion: 1 })).version).toBe(2);
        expect((await store.memory.history(ns, 'k')).map((r) => r.value)).toEqual(['d', 'a']);
        expect(await codeOf(store.memory.put(ns, 'fresh', 'x', { expectedVersion: 1 }))).toBe(
          'TROUPE_STORE_CONFLICT',
        );
        expect(await store.memory.get(ns, 'fresh')).toBeUndefined();
      });

      it('numbers concurrent writes without gaps or duplicates', async () => {
        const ns = uniqueName('mem');
        const records = await Promise.all(Array.from({ length: 10 }, (_, i) => store.memory.put(ns, 'k', i)));
        expect(records.map((r) => r.version).sort((a, b) => a - b)).toEqual(
          Array.from({ length: 10 }, (_, i) => i + 1),
        );
        expect((await store.memory.history(ns, 'k')).map((r) => r.version)).toEqual(
          Array.from({ length: 10 }, (_, i) => 10 - i),
        );
      });

      it('lists the latest version of every key of a namespace in key order', async () => {
        const ns = uniqueName('mem');
        await store.memory.put(ns, 'b', 'b1', { at: 1 });
        await store.memory.put(ns, 'a', 'a1', { at: 2 });
        await store.memory.put(ns, 'b', 'b2', { at: 3 });
        await store.memory.put(ns, 'c', 'c1', { at: 4 });
        await store.memory.put(ns, 'b', 'b3', { at: 5, source: 'third' });
        await store.memory.put(uniqueName('mem'), 'a', 'elsewhere');
        const list = await store.memory.list(ns);
        expect(list.map((r) => [r.key, r.value, r.version, r.at])).toEqual([
          ['a', 'a1', 1, 2],
          ['b', 'b3', 3, 5],
          ['c', 'c1', 1, 4],
        ]);
        expect(list[1]).toEqual({ namespace: ns, key: 'b', value: 'b3', version: 3, at: 5, source: 'third' });
        expect(await store.memory.list(uniqueName('empty'))).toEqual([]);
      });

      it('isolates values and rejects values that are not JSON without adding a version', async () => {
        const ns = uniqueName('mem');
        const value = { prefs: ['short replies'] };
        const written = await store.memory.put(ns, 'k', value);
        value.prefs.push('caller change');
        written.value.prefs.push('returned change');
        const read = await store.memory.get<typeof value>(ns, 'k');
        read?.value.prefs.push('read change');
        (await store.memory.history<typeof value>(ns, 'k'))[0]?.value.prefs.push('history change');
        (await store.memory.list<typeof value>(ns))[0]?.value.prefs.push('list change');
        expect((await store.memory.get(ns, 'k'))?.value).toEqual({ prefs: ['short replies'] });
        for (const [label, bad] of invalidValues()) {
          expect(await codeOf(store.memory.put(ns, 'k', bad)), label).toBe('TROUPE_STORE_INVALID_VALUE');
        }
        expect(await store.memory.history(ns, 'k')).toHaveLength(1);
      });
    });

    describe('outbox', () => {
      const settleAll = async (keys: string[]): Promise<void> => {
        for (const key of keys) await store.outbox.settle(key, { at: 0, sent: false });
      };

      it('records a response once and returns the stored entry to duplicates', async () => {
        const key = uniqueName('out');
        const first = await store.outbox.record(response(key), 100);
        expect(first.created).toBe(true);
        expect(first.entry).toEqual({ key, response: response(key), recordedAt: 100, sentParts: [] });
        expect(first.entry.settled).toBeUndefined();
        const again = await store.outbox.record(response(key, { text: 'a different text' }), 200);
        expect(again.created).toBe(false);
        expect(again.entry).toEqual({ key, response: response(key), recordedAt: 100, sentParts: [] });
        expect(await store.outbox.get(key)).toEqual(first.entry);
        expect(await store.outbox.get(uniqueName('out'))).toBeUndefined();
        await settleAll([key]);
      });

      it('refuses a response, part or settlement that is not JSON by rejecting, and records nothing', async () => {
        const key = uniqueName('out');
        const invalid = 'TROUPE_STORE_INVALID_VALUE';
        const bad = { ...response(key), preparedAt: Number.NaN };
        expect(await codeOf(store.outbox.record(bad, 100))).toBe(invalid);
        expect(await codeOf(store.outbox.record(response(key), Number.POSITIVE_INFINITY))).toBe(invalid);
        expect(await store.outbox.get(key)).toBeUndefined();
        await store.outbox.record(response(key), 100);
        const part = { index: 0, kind: 'text' as const, messageId: 'm', attempts: Number.NaN };
        expect(await codeOf(store.outbox.markPartSent(key, part))).toBe(invalid);
        expect(await codeOf(store.outbox.settle(key, { at: Number.NaN, sent: true }))).toBe(invalid);
        expect(await codeOf(store.outbox.settle(key, { at: 1, sent: true }, part))).toBe(invalid);
        expect(await store.outbox.get(key)).toMatchObject({ sentParts: [] });
        expect((await store.outbox.get(key))?.settled).toBeUndefined();
        await settleAll([key]);
      });

      it('lets exactly one of many concurrent records create the entry', async () => {
        const key = uniqueName('out');
        const results = await Promise.all(
          Array.from({ length: 5 }, (_, i) =>
            store.outbox.record(response(key, { text: `try ${i}` }), 100 + i),
          ),
        );
        expect(results.filter((r) => r.created)).toHaveLength(1);
        const stored = await store.outbox.get(key);
        for (const r of results) expect(r.entry).toEqual(stored);
        await settleAll([key]);
      });

      it('notes sent parts once each, in the order they were sent', async () => {
        const key = uniqueName('out');
        await store.outbox.record(response(key), 1);
        await store.outbox.markPartSent(key, part(0, 'platform-0'));
        await store.outbox.markPartSent(key, {
          index: 1,
          kind: 'attachment',
          messageId: 'platform-1',
          attempts: 3,
        });
        await store.outbox.markPartSent(key, part(0, 'a-second-send'));
        expect((await store.outbox.get(key))?.sentParts).toEqual([
          { index: 0, kind: 'text', messageId: 'platform-0', attempts: 1 },
          { index: 1, kind: 'attachment', messageId: 'platform-1', attempts: 3 },
        ]);
        await store.outbox.markPartSent(uniqueName('out'), part(0));
        await settleAll([key]);
      });

      it('keeps every part when parts are noted concurrently', async () => {
        const key = uniqueName('out');
        await store.outbox.record(response(key), 1);
        await Promise.all([0, 1, 2, 3, 4, 2, 0].map((i) => store.outbox.markPartSent(key, part(i))));
        const parts = (await store.outbox.get(key))?.sentParts ?? [];
        expect(parts.map((p) => p.index).sort()).toEqual([0, 1, 2, 3, 4]);
        await settleAll([key]);
      });

      it('settles once; the first settlement stands', async () => {
        const key = uniqueName('out');
        await store.outbox.record(response(key), 1);
        await store.outbox.markPartSent(key, part(0));
        await store.outbox.settle(key, { at: 50, sent: true });
        await store.outbox.settle(key, {
          at: 60,
          sent: false,
          error: { code: 'TROUPE_TRANSPORT_FAILED', message: 'late', retryable: true },
        });
        expect(await store.outbox.get(key)).toEqual({
          key,
          response: response(key),
          recordedAt: 1,
          sentParts: [part(0)],
          settled: { at: 50, sent: true },
        });
        const failed = uniqueName('out');
        await store.outbox.record(response(failed), 2);
        const settlement = {
          at: 70,
          sent: false,
          error: { code: 'TROUPE_TRANSPORT_FORBIDDEN' as const, message: 'Missing Access', retryable: false },
        };
        await store.outbox.settle(failed, settlement);
        expect((await store.outbox.get(failed))?.settled).toEqual(settlement);
        await store.outbox.settle(uniqueName('out'), { at: 1, sent: true });
      });

      it('settles with the last part noted in the same write, once', async () => {
        const key = uniqueName('out');
        await store.outbox.record(response(key), 1);
        await store.outbox.markPartSent(key, part(0, 'platform-0'));
        await store.outbox.settle(key, { at: 50, sent: true }, part(1, 'platform-1'));
        expect(await store.outbox.get(key)).toEqual({
          key,
          response: response(key),
          recordedAt: 1,
          sentParts: [part(0, 'platform-0'), part(1, 'platform-1')],
          settled: { at: 50, sent: true },
        });
        // A part already noted is not noted twice; an entry already settled keeps its settlement.
        const again = uniqueName('out');
        await store.outbox.record(response(again), 2);
        await store.outbox.markPartSent(again, part(0, 'first'));
        await store.outbox.settle(again, { at: 60, sent: true }, part(0, 'resent'));
        expect((await store.outbox.get(again))?.sentParts).toEqual([part(0, 'first')]);
        await store.outbox.settle(again, { at: 70, sent: false }, part(1));
        expect((await store.outbox.get(again))?.settled).toEqual({ at: 60, sent: true });
        // A part noted after the settlement does not replace the one it added.
        await store.outbox.markPartSent(key, part(1, 'late'));
        expect((await store.outbox.get(key))?.sentParts).toEqual([
          part(0, 'platform-0'),
          part(1, 'platform-1'),
        ]);
      });

      it('lists unsettled entries oldest first, leaving settled ones out', async () => {
        const prefix = uniqueName('out');
        const keys = [`${prefix}-c`, `${prefix}-a`, `${prefix}-b`, `${prefix}-settled`];
        await store.outbox.record(response(keys[0] as string), 3_000);
        await store.outbox.record(response(keys[1] as string), 1_000);
        await store.outbox.record(response(keys[2] as string), 2_000);
        await store.outbox.record(response(keys[3] as string), 500);
        await store.outbox.markPartSent(keys[2] as string, part(0));
        await store.outbox.settle(keys[3] as string, { at: 600, sent: true });
        try {
          const all = await store.outbox.unsettled();
          const mine = all.filter((e) => e.key.startsWith(prefix));
          expect(mine.map((e) => e.key)).toEqual([`${prefix}-a`, `${prefix}-b`, `${prefix}-c`]);
          expect(mine[1]?.sentParts).toEqual([part(0)]);
          expect(mine[0]?.settled).toBeUndefined();
          const recordedAts = all.map((e) => e.recordedAt);
          expect(recordedAts).toEqual([...recordedAts].sort((a, b) => a - b));
          const limited = await store.outbox.unsettled(2);
          expect(limited.map((e) => e.recordedAt)).toEqual(recordedAts.slice(0, 2));
          expect(await store.outbox.unsettled(0)).toEqual([]);
        } finally {
          await settleAll(keys);
        }
        expect((await store.outbox.unsettled()).filter((e) => e.key.startsWith(prefix))).toEqual([]);
      });

      it('isolates entries from the caller', async () => {
        const key = uniqueName('out');
        const original = response(key);
        const { entry } = await store.outbox.record(original, 1);
        original.text = 'caller changed it';
        original.attachments.push({ name: 'x', mediaType: 'text/plain', url: 'https://example.com/x' });
        entry.sentParts.push(part(9));
        entry.response.channel.id = 'changed';
        const read = (await store.outbox.get(key)) as OutboxEntry;
        read.response.speaker = undefined;
        read.sentParts.push(part(8));
        expect(await store.outbox.get(key)).toEqual({
          key,
          response: response(key),
          recordedAt: 1,
          sentParts: [],
        });
        await settleAll([key]);
      });
    });

    describe('events and counters', () => {
      it('appends events per stream and reads them oldest first', async () => {
        const a = uniqueName('stream');
        const b = uniqueName('stream');
        await store.events.append(a, { n: 1, text: 'first ✨' }, 10);
        await store.events.append(b, { n: 1 }, 11);
        await store.events.append(a, { n: 2, nested: { list: [1, 2] } }, 12);
        await store.events.append(a, { n: 3 }, 12);
        const events = await store.events.read(a);
        expect(events.map((e) => [e.stream, e.at, e.data])).toEqual([
          [a, 10, { n: 1, text: 'first ✨' }],
          [a, 12, { n: 2, nested: { list: [1, 2] } }],
          [a, 12, { n: 3 }],
        ]);
        const seqs = events.map((e) => e.seq);
        expect(seqs.every((s) => Number.isInteger(s))).toBe(true);
        expect(seqs).toEqual([...seqs].sort((x, y) => x - y));
        expect(new Set(seqs).size).toBe(3);
        expect((await store.events.read(b)).map((e) => e.data)).toEqual([{ n: 1 }]);
        expect(await store.events.read(uniqueName('stream'))).toEqual([]);
      });

      it('reads after a sequence number, with a limit', async () => {
        const s = uniqueName('stream');
        for (let n = 1; n <= 6; n++) await store.events.append(s, { n }, n);
        const all = await store.events.read(s);
        const third = all[2]?.seq as number;
        expect((await store.events.read(s, { afterSeq: third })).map((e) => e.data.n)).toEqual([4, 5, 6]);
        expect((await store.events.read(s, { afterSeq: third, limit: 2 })).map((e) => e.data.n)).toEqual([
          4, 5,
        ]);
        expect((await store.events.read(s, { limit: 1 })).map((e) => e.data.n)).toEqual([1]);
        expect(await store.events.read(s, { afterSeq: all[5]?.seq as number })).toEqual([]);
        expect(await store.events.read(s, { limit: 0 })).toEqual([]);
        await store.events.append(s, { n: 7 }, 7);
        const [next] = await store.events.read(s, { afterSeq: all[5]?.seq as number });
        expect(next?.data).toEqual({ n: 7 });
        expect(next?.seq).toBeGreaterThan(all[5]?.seq as number);
      });

      it('isolates event data and rejects data that is not JSON without appending', async () => {
        const s = uniqueName('stream');
        const data = { list: [1] };
        await store.events.append(s, data, 1);
        data.list.push(2);
        const [read] = await store.events.read(s);
        (read?.data.list as number[] | undefined)?.push(3);
        expect((await store.events.read(s)).map((e) => e.data)).toEqual([{ list: [1] }]);
        const cycle: Record<string, unknown> = {};
        cycle.me = cycle;
        for (const bad of [{ f: () => 1 }, { n: Number.NaN }, cycle, { b: 1n }]) {
          expect(await codeOf(store.events.append(s, bad, 2))).toBe('TROUPE_STORE_INVALID_VALUE');
        }
        expect(await store.events.read(s)).toHaveLength(1);
      });

      it('counts, starting from zero', async () => {
        const c = uniqueName('counter');
        expect(await store.events.counter(c)).toBe(0);
        expect(await store.events.increment(c)).toBe(1);
        expect(await store.events.increment(c, 5)).toBe(6);
        expect(await store.events.increment(c, -2)).toBe(4);
        expect(await store.events.counter(c)).toBe(4);
        expect(await store.events.counter(uniqueName('counter'))).toBe(0);
      });

      it('loses no concurrent increment', async () => {
        const c = uniqueName('counter');
        const values = await Promise.all(Array.from({ length: 100 }, () => store.events.increment(c)));
        expect(await store.events.counter(c)).toBe(100);
        expect([...values].sort((a, b) => a - b)).toEqual(Array.from({ length: 100 }, (_, i) => i + 1));
      });
    });

    describe('processed ids', () => {
      it('marks an id once per scope', async () => {
        const scope = uniqueName('scope');
        expect(await store.processed.isProcessed(scope, 'gmail-1')).toBe(false);
        expect(await store.processed.markProcessed(scope, 'gmail-1', 100)).toBe(true);
        expect(await store.processed.markProcessed(scope, 'gmail-1', 200)).toBe(false);
        expect(await store.processed.isProcessed(scope, 'gmail-1')).toBe(true);
        expect(await store.processed.isProcessed(scope, 'gmail-2')).toBe(false);
        const other = uniqueName('scope');
        expect(await store.processed.isProcessed(other, 'gmail-1')).toBe(false);
        expect(await store.processed.markProcessed(other, 'gmail-1', 300)).toBe(true);
      });

      it('lets exactly one of many concurrent marks win', async () => {
        const scope = uniqueName('scope');
        const results = await Promise.all(
          Array.from({ length: 20 }, (_, i) => store.processed.markProcessed(scope, 'msg-1', i)),
        );
        expect(results.filter(Boolean)).toHaveLength(1);
        expect(await store.processed.isProcessed(scope, 'msg-1')).toBe(true);
      });
    });

    describe('history', () => {
      it('returns the most recent lines of a channel, oldest first', async () => {
        const ch = uniqueName('channel');
        const other = uniqueName('channel');
        for (let n = 1; n <= 5; n++) {
          await store.history.append(line(ch, n));
          await store.history.append(line(other, n + 100));
        }
        expect(await store.history.recent(ch, 3)).toEqual([line(ch, 3), line(ch, 4), line(ch, 5)]);
        expect(await store.history.recent(ch, 100)).toEqual([1, 2, 3, 4, 5].map((n) => line(ch, n)));
        expect((await store.history.recent(other, 2)).map((e) => e.messageId)).toEqual(['m-104', 'm-105']);
        expect(await store.history.recent(uniqueName('channel'), 10)).toEqual([]);
        expect(await store.history.recent(ch, 0)).toEqual([]);
      });

      it('keeps unicode text and isolates entries from the caller', async () => {
        const ch = uniqueName('channel');
        const entry = { ...line(ch, 1), text: 'Zoë: 你好 👋🏽\nsecond line' };
        await store.history.append(entry);
        entry.author.name = 'changed';
        entry.text = 'changed';
        const [read] = await store.history.recent(ch, 1);
        if (read) read.author.name = 'mutated';
        expect(await store.history.recent(ch, 1)).toEqual([
          { ...line(ch, 1), text: 'Zoë: 你好 👋🏽\nsecond line' },
        ]);
      });

      it('keeps order through many appends', async () => {
        const ch = uniqueName('channel');
        for (let n = 1; n <= 60; n++) await store.history.append(line(ch, n));
        // A store that keeps fewer lines per channel (in memory) gives its newest ones.
        const n = Math.min(50, store.history.keptPerChannel ?? 50);
        expect((await store.history.recent(ch, 50)).map((e) => e.messageId)).toEqual(
          Array.from({ length: n }, (_, i) => `m-${i + 61 - n}`),
        );
      });
    });

    describe('lifecycle', () => {
      it('closes idempotently and refuses every operation afterwards with TROUPE_STORE_UNAVAILABLE', async () => {
        const c = uniqueName('closed');
        await store.documents.put(c, 'k', 1);
        await store.close();
        await store.close();
        const operations: [string, () => Promise<unknown>][] = [
          ['documents.get', () => store.documents.get(c, 'k')],
          ['documents.put', () => store.documents.put(c, 'k', 2)],
          ['documents.putMany', () => store.documents.putMany(c, [{ key: 'k', value: 2 }])],
          [
            'documents.batch',
            () => store.documents.batch([{ op: 'put', collection: c, key: 'k', value: 2 }]),
          ],
          ['documents.delete', () => store.documents.delete(c, 'k')],
          ['documents.list', () => store.documents.list(c)],
          ['documents.expireIdle', () => store.documents.expireIdle(c, 1)],
          ['memory.get', () => store.memory.get(c, 'k')],
          ['memory.put', () => store.memory.put(c, 'k', 1)],
          ['memory.history', () => store.memory.history(c, 'k')],
          ['memory.list', () => store.memory.list(c)],
          ['outbox.record', () => store.outbox.record(response(c), 1)],
          ['outbox.markPartSent', () => store.outbox.markPartSent(c, part(0))],
          ['outbox.settle', () => store.outbox.settle(c, { at: 1, sent: true })],
          ['outbox.unsettled', () => store.outbox.unsettled()],
          ['outbox.get', () => store.outbox.get(c)],
          ['events.append', () => store.events.append(c, {}, 1)],
          ['events.read', () => store.events.read(c)],
          ['events.increment', () => store.events.increment(c)],
          ['events.counter', () => store.events.counter(c)],
          ['processed.markProcessed', () => store.processed.markProcessed(c, 'x', 1)],
          ['processed.isProcessed', () => store.processed.isProcessed(c, 'x')],
          ['history.append', () => store.history.append(line(c, 1))],
          ['history.recent', () => store.history.recent(c, 1)],
        ];
        for (const [label, operation] of operations) {
          let result: Promise<unknown>;
          try {
            result = operation();
          } catch (error) {
            throw new Error(`${label} threw synchronously instead of rejecting: ${String(error)}`);
          }
          const error = await rejectionOf(result);
          expect(error.code, label).toBe('TROUPE_STORE_UNAVAILABLE');
          expect(error.retryable, label).toBe(true);
        }
      });

      it('reports its kind', () => {
        expect(typeof store.kind).toBe('string');
        expect(store.kind.length).toBeGreaterThan(0);
      });

      const reopen = options.reopen;
      if (reopen) {
        it('keeps everything written across a close and reopen', async () => {
          const c = uniqueName('durable');
          const ns = uniqueName('durable');
          const stream = uniqueName('durable');
          const counter = uniqueName('durable');
          const scope = uniqueName('durable');
          const ch = uniqueName('durable');
          const pending = uniqueName('durable-out');
          const done = uniqueName('durable-out');

          await store.documents.put(c, 'a', { n: 1, text: 'héllo 🎭' }, { at: 10 });
          await store.documents.put(c, 'a', { n: 2, text: 'héllo 🎭' }, { at: 11 });
          await store.documents.putMany(c, [{ key: 'b', value: [1, 2] }], 12);
          await store.memory.put(ns, 'pref', 'v1', { at: 1, source: 'seed' });
          await store.memory.put(ns, 'pref', 'v2', { at: 2 });
          await store.outbox.record(response(pending), 100);
          await store.outbox.markPartSent(pending, part(0));
          await store.outbox.record(response(done), 101);
          await store.outbox.settle(done, { at: 102, sent: true });
          await store.events.append(stream, { n: 1 }, 5);
          await store.events.append(stream, { n: 2 }, 6);
          await store.events.increment(counter, 7);
          await store.processed.markProcessed(scope, 'id-1', 3);
          await store.history.append(line(ch, 1));
          await store.history.append(line(ch, 2));
          await store.close();

          store = await reopen(store);

          expect(await store.documents.get(c, 'a')).toEqual({
            collection: c,
            key: 'a',
            value: { n: 2, text: 'héllo 🎭' },
            version: 2,
            updatedAt: 11,
          });
          expect(keysOf(await store.documents.list(c))).toEqual(['a', 'b']);
          expect(await store.documents.put(c, 'a', { n: 3 }, { expectedVersion: 2 })).toBe(3);
          expect((await store.memory.history(ns, 'pref')).map((r) => [r.value, r.version, r.source])).toEqual(
            [
              ['v2', 2, undefined],
              ['v1', 1, 'seed'],
            ],
          );
          expect(await store.outbox.get(pending)).toEqual({
            key: pending,
            response: response(pending),
            recordedAt: 100,
            sentParts: [part(0)],
          });
          expect((await store.outbox.get(done))?.settled).toEqual({ at: 102, sent: true });
          const unsettled = (await store.outbox.unsettled()).map((e) => e.key);
          expect(unsettled).toContain(pending);
          expect(unsettled).not.toContain(done);
          const events = await store.events.read(stream);
          expect(events.map((e) => e.data)).toEqual([{ n: 1 }, { n: 2 }]);
          await store.events.append(stream, { n: 3 }, 7);
          const after = await store.events.read(stream, { afterSeq: events[1]?.seq as number });
          expect(after.map((e) => e.data)).toEqual([{ n: 3 }]);
          expect(await store.events.counter(counter)).toBe(7);
          expect(await store.events.increment(counter)).toBe(8);
          expect(await store.processed.markProcessed(scope, 'id-1', 4)).toBe(false);
          expect(await store.history.recent(ch, 10)).toEqual([line(ch, 1), line(ch, 2)]);
          await store.outbox.settle(pending, { at: 200, sent: true });
        });
      }
    });
  });
}
