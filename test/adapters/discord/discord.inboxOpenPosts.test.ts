import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from 'discord.js';
import { afterEach, describe, expect, it } from 'vitest';
import { DiscordInbox, type InboxAssistant, type InboxEntry } from '../../../src/adapters/discord/index.js';
import { createMemoryStore } from '../../../src/adapters/store/memory/memoryStore.js';
import { openSqliteStore } from '../../../src/adapters/store/sqlite/sqliteStore.js';
import type { DocumentStore, TroupeStore } from '../../../src/ports/store.js';

// The inbox's poll lists only the posts still open: closed ones are kept (by key) but never listed.
const POSTS = 'discord-inbox';
const OPEN = 'discord-inbox-open';
const CHANNEL = '200000000000000002';

const stores: TroupeStore[] = [];
afterEach(async () => {
  for (const store of stores.splice(0)) await store.close();
});

/** The store with its document reads counted: documents returned, and which collections were listed. */
function counting(store: TroupeStore) {
  const reads = { docs: 0, listed: [] as string[] };
  const inner = store.documents;
  const documents = new Proxy(inner, {
    get(target, name) {
      if (name === 'get')
        return async (collection: string, key: string) => {
          const doc = await target.get(collection, key);
          if (doc) reads.docs += 1;
          return doc;
        };
      if (name === 'list')
        return async (collection: string, options?: Parameters<DocumentStore['list']>[1]) => {
          const docs = await target.list(collection, options);
          reads.docs += docs.length;
          reads.listed.push(collection);
          return docs;
        };
      const value = Reflect.get(target, name) as unknown;
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  const reset = () => {
    reads.docs = 0;
    reads.listed = [];
  };
  return { store: { documents, processed: store.processed }, reads, reset };
}

/** Interrupts held in a map: raised pending, answered by hand; `serve` makes pending() lag behind. */
function fakeAssistant() {
  const items = new Map<string, InboxEntry>();
  let stale: InboxEntry[] | undefined;
  const assistant: InboxAssistant = {
    pending: async () => stale ?? [...items.values()].filter((i) => i.status === 'pending'),
    interrupt: async (id) => items.get(id),
    answer: async () => {
      throw new Error('answered by hand in these tests');
    },
    record: async () => undefined,
  };
  return {
    assistant,
    raise(...ids: string[]) {
      for (const id of ids)
        items.set(id, {
          id,
          emailId: id.split('#')[0] as string,
          status: 'pending',
          request: {
            action_request: { action: 'Question', args: { content: `About ${id}?` } },
            config: { allow_ignore: true, allow_respond: true, allow_edit: false, allow_accept: false },
            description: `Email ${id}`,
          },
        });
    },
    answer(...ids: string[]) {
      for (const id of ids) {
        const item = items.get(id);
        if (item) Object.assign(item, { status: 'answered', answer: { type: 'ignore' } });
      }
    },
    /** What pending() returns now (kept, it does not change with later answers). */
    snapshot(): InboxEntry[] {
      return [...items.values()].filter((i) => i.status === 'pending').map((i) => ({ ...i }));
    },
    /** pending() returns `read` (one taken before later answers), or the live list again. */
    serve(read: InboxEntry[] | undefined) {
      stale = read;
    },
  };
}

/** A Discord REST client that records which interrupts were posted and which messages edited. */
function fakeClient() {
  const posted: string[] = [];
  const edited: string[] = [];
  const rest = {
    post: async (_route: string, { body }: { body: { embeds: { footer?: { text?: string } }[] } }) => {
      posted.push(String(body.embeds[0]?.footer?.text).replace(/^Interrupt /u, ''));
      return { id: `message-${posted.length}` };
    },
    patch: async (route: string) => {
      edited.push(route.split('/').at(-1) as string);
      return {};
    },
  };
  return { client: { rest } as unknown as Client, posted, edited };
}

function inboxOn(
  store: Pick<TroupeStore, 'documents' | 'processed'>,
  assistant: InboxAssistant,
  client: Client,
) {
  return new DiscordInbox({ client, assistant, store, target: { kind: 'channel', channelId: CHANNEL } });
}

const ids = (prefix: string, n: number) =>
  Array.from({ length: n }, (_, i) => `${prefix}-${String(i).padStart(4, '0')}#1`);

describe('the Discord inbox reads only its open posts', () => {
  it('after 1,000 closed posts a poll reads the open ones only, and still closes them', async () => {
    const store = createMemoryStore();
    const counted = counting(store);
    const email = fakeAssistant();
    const discord = fakeClient();
    const inbox = inboxOn(counted.store, email.assistant, discord.client);
    const old = ids('old', 1_000);
    email.raise(...old);
    await inbox.poll();
    email.answer(...old);
    await inbox.poll();
    expect(discord.edited).toHaveLength(1_000);
    expect(await store.documents.list(POSTS)).toHaveLength(1_000);
    expect(await store.documents.list(OPEN)).toEqual([]);

    email.raise('new-a#1', 'new-b#1', 'new-c#1');
    await inbox.poll();
    email.answer('new-c#1');
    counted.reset();
    await inbox.poll();
    // Two pending (a post each, read by key), three open listed, the answered one read and closed.
    expect(counted.reads.listed).toEqual([OPEN]);
    expect(counted.reads.docs).toBeLessThanOrEqual(8);
    expect(discord.edited.at(-1)).toBe('message-1003');
    expect((await store.documents.list(OPEN)).map((d) => d.key)).toEqual(['new-a#1', 'new-b#1']);
    expect(discord.posted).toHaveLength(1_003);
  });

  it('a closed post still keeps its interrupt from being posted again by a pending() read before the answer', async () => {
    const store = createMemoryStore();
    const email = fakeAssistant();
    const discord = fakeClient();
    const inbox = inboxOn(store, email.assistant, discord.client);
    email.raise('mail-1#1');
    await inbox.poll();
    const early = email.snapshot(); // a pending() read taken before the answer below
    email.answer('mail-1#1');
    await inbox.poll();
    expect(discord.edited).toEqual(['message-1']);
    expect(await store.documents.get(OPEN, 'mail-1#1')).toBeUndefined();
    expect((await store.documents.get(POSTS, 'mail-1#1'))?.value).toMatchObject({ state: 'closed' });
    // A poll whose pending() still lists it (as one racing the answer would) does not post it again.
    email.serve(early);
    await inbox.poll();
    // And after a restart, on the same store.
    await inboxOn(store, email.assistant, discord.client).poll();
    expect(discord.posted).toEqual(['mail-1#1']);
    expect(discord.edited).toEqual(['message-1']);
  });

  it('a store holding posts in the old layout (one collection, nothing indexed) keeps working after the upgrade', async () => {
    const path = join(await mkdtemp(join(tmpdir(), 'troupe-inbox-open-')), 'troupe.db');
    const before = await openSqliteStore({ path });
    const now = Date.now();
    const post = (key: string, state: string, extra: object = {}) => ({
      op: 'put' as const,
      collection: POSTS,
      key,
      value: { interruptId: key, state, claimedAt: now, channelId: CHANNEL, ...extra },
    });
    // As the version before wrote them: 1,200 closed (three pages), two still posted, one refused.
    const closed = ids('closed', 1_200);
    await before.documents.batch(closed.map((k) => post(k, 'closed', { messageId: `m-${k}`, by: 'u' })));
    await before.documents.batch([
      post('a-open#1', 'posted', { messageId: 'm-a' }),
      post('zz-answered#1', 'posted', { messageId: 'm-zz' }),
      post('r-refused#1', 'refused', { refusal: { code: 50035, message: 'Invalid Form Body' } }),
    ]);
    await before.close();

    const store = await openSqliteStore({ path });
    stores.push(store);
    const counted = counting(store);
    const email = fakeAssistant();
    email.raise('a-open#1', 'zz-answered#1', 'r-refused#1', ...closed.slice(0, 3));
    const early = email.snapshot();
    email.answer('zz-answered#1', ...closed.slice(0, 3));
    const discord = fakeClient();
    const inbox = inboxOn(counted.store, email.assistant, discord.client);
    // A pending() read from before the answers: every one of them was posted already, none again.
    email.serve(early);
    await inbox.poll();
    expect(discord.posted).toEqual([]);
    email.serve(undefined);
    await inbox.poll();
    expect(discord.edited).toEqual(['m-zz']);
    expect((await store.documents.list(OPEN)).map((d) => d.key)).toEqual(['a-open#1']);

    counted.reset();
    await inbox.poll();
    expect(counted.reads.listed).toEqual([OPEN]);
    expect(counted.reads.docs).toBeLessThanOrEqual(10);
    email.answer('a-open#1');
    await inboxOn(counted.store, email.assistant, discord.client).poll();
    expect(discord.edited).toEqual(['m-zz', 'm-a']);
    expect(discord.posted).toEqual([]);
    expect(await store.documents.list(OPEN)).toEqual([]);
  });
});
