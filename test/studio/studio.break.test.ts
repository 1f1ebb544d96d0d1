import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { SimulatedClock } from '../../src/actors/clock.js';
import { createLocalMailbox } from '../../src/adapters/mail/localMailbox.js';
import { createMemoryStore } from '../../src/adapters/store/memory/memoryStore.js';
import { createLogger } from '../../src/logging/logger.js';
import type { TroupeStore } from '../../src/ports/store.js';
import { type OpenedStudio, openStudio } from '../../src/studio/openStudio.js';

/** What a raw TCP client gets back after writing `text` (and nothing more) until the server closes. */
function rawExchange(port: number, text: string, chunks: string[] = []): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let received = '';
    socket.setEncoding('utf8');
    socket.on('data', (d: string) => {
      received += d;
    });
    socket.on('error', reject);
    socket.on('close', () => resolve(received));
    socket.write(text);
    for (const chunk of chunks) socket.write(chunk);
  });
}

/** A live stream read as it comes: the versions of the states received, and their bytes. */
function liveStream(port: number, token: string, read: boolean) {
  const socket = connect(port, '127.0.0.1');
  const seen = { versions: [] as number[], bytes: 0 };
  let buffer = '';
  const waiting: (() => void)[] = [];
  socket.setEncoding('utf8');
  socket.on('data', (d: string) => {
    seen.bytes += Buffer.byteLength(d);
    buffer += d;
    for (let m = /"version":(\d+)/u.exec(buffer); m; m = /"version":(\d+)/u.exec(buffer)) {
      seen.versions.push(Number(m[1]));
      buffer = buffer.slice(m.index + m[0].length);
    }
    for (const w of waiting.splice(0)) w();
  });
  socket.write(`GET /api/events?token=${token} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`);
  if (!read) socket.pause();
  return {
    seen,
    resume: () => socket.resume(),
    close: () => socket.destroy(),
    /** Resolves once a state of at least `version` has come. */
    async until(version: number) {
      while (!seen.versions.some((v) => v >= version)) await new Promise<void>((r) => waiting.push(r));
    },
  };
}

let studio: OpenedStudio | undefined;
let store: TroupeStore | undefined;
afterEach(async () => {
  await studio?.close();
  await store?.close();
  studio = undefined;
  store = undefined;
});

const open = async (options: { bodyTimeoutMs?: number } = {}) => {
  store = createMemoryStore();
  studio = await openStudio({ clock: new SimulatedClock(1_795_718_400_000), port: 0, store, ...options });
  return studio;
};

const answer = (s: OpenedStudio, id: string, body: unknown) =>
  fetch(`${s.url}api/inbox/${encodeURIComponent(id)}/answer`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${s.token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });

describe('Studio against a hostile or careless client', () => {
  it('answers a POST whose body never comes with 408 and closes the connection, instead of waiting forever', async () => {
    const s = await open({ bodyTimeoutMs: 200 });
    const head =
      `POST /api/playground/message HTTP/1.1\r\nHost: 127.0.0.1:${s.port}\r\n` +
      `Authorization: Bearer ${s.token}\r\nContent-Type: application/json\r\nContent-Length: 20\r\n\r\n`;
    const reply = await rawExchange(s.port, head);
    expect(reply).toMatch(/^HTTP\/1\.1 408 /u);
    expect(reply).toContain('TROUPE_STUDIO_BAD_REQUEST');
    expect(s.studioStore.getSnapshot().context.playground.messages).toHaveLength(0);
  });

  it('refuses a chunked body over 64 KB and closes the connection rather than reading the rest', async () => {
    const s = await open();
    const head =
      `POST /api/playground/message HTTP/1.1\r\nHost: 127.0.0.1:${s.port}\r\n` +
      `Authorization: Bearer ${s.token}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`;
    const piece = 'a'.repeat(16 * 1024);
    // 640 KB offered and never terminated: the server must close once it has said no.
    const chunks = Array.from({ length: 40 }, () => `${piece.length.toString(16)}\r\n${piece}\r\n`);
    const reply = await rawExchange(s.port, head, chunks);
    expect(reply).toMatch(/^HTTP\/1\.1 400 /u);
    expect(reply).toContain('over 65536 bytes');
  });

  it('refuses an edit naming a field the tool does not have (a typo, __proto__): the interrupt stays pending', async () => {
    const s = await open();
    const before = s.studioStore.getSnapshot().context.interrupts.find((i) => i.id === 'sample-03#1');
    expect(before?.action).toBe('send_email_tool');

    const typo = await answer(s, 'sample-03#1', { type: 'edit', args: { contnet: 'Yes, 100 a minute.' } });
    expect(typo.status).toBe(400);
    const typoError = (await typo.json()) as { error: { code: string; message: string } };
    expect(typoError.error.code).toBe('TROUPE_INBOX_INVALID');
    expect(typoError.error.message).toContain('contnet');

    const proto = await fetch(`${s.url}api/inbox/${encodeURIComponent('sample-03#1')}/answer`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${s.token}` },
      body: '{"type":"edit","args":{"__proto__":{"to":"evil@example.com"},"subject":"S"}}',
    });
    expect(proto.status).toBe(400);
    expect(((await proto.json()) as { error: { message: string } }).error.message).toContain('__proto__');

    expect((await s.assistant.interrupt('sample-03#1'))?.status).toBe('pending');
    expect(s.studioStore.getSnapshot().context.interrupts.map((i) => i.id)).toContain('sample-03#1');

    const right = await answer(s, 'sample-03#1', { type: 'edit', args: { content: 'Yes, 100 a minute.' } });
    expect(right.status).toBe(200);
    expect((await s.assistant.interrupt('sample-03#1'))?.status).toBe('answered');
  });

  it('does not pile up states for a live-stream client that stops reading; it gets the newest when it reads again', async () => {
    const s = await open();
    const big = 'x'.repeat(3_900);
    // A playground of 200 long messages: each state on the stream is about 0.9 MB.
    for (let i = 0; i < 200; i++)
      s.studioStore.send({
        type: 'playgroundPosted',
        message: { id: `m${i}`, at: i, author: { kind: 'human', id: 'u', name: 'U' }, text: big },
      });
    const reader = liveStream(s.port, s.token, true);
    const stalled = liveStream(s.port, s.token, false);
    const rounds = 40;
    for (let i = 1; i <= rounds; i++) {
      s.studioStore.send({ type: 'ticked', now: s.clock.now() + i });
      // The reading client got this change, so the server has written it to the stalled one too.
      await reader.until(s.studioStore.getSnapshot().context.version);
    }
    const newest = s.studioStore.getSnapshot().context.version;
    stalled.resume();
    await stalled.until(newest);
    reader.close();
    stalled.close();
    expect(reader.seen.versions.length).toBeGreaterThanOrEqual(rounds);
    // Only what the socket held when it stopped reading, then the newest state: not all 40.
    expect(stalled.seen.versions.length).toBeLessThan(rounds / 2);
    expect(stalled.seen.versions.at(-1)).toBe(newest);
  });

  it('answers one interrupt sent five ways at once exactly once: one 200, the rest 409, one email sent', async () => {
    const s = await open();
    const draft = s.studioStore.getSnapshot().context.interrupts.find((i) => i.id === 'sample-08#1');
    expect(draft?.action).toBe('send_email_tool');
    const bodies = [
      { type: 'accept' },
      { type: 'edit', args: { content: 'Approved.' } },
      { type: 'accept' },
      { type: 'ignore' },
      { type: 'response', args: 'shorter please' },
    ];
    const statuses = (await Promise.all(bodies.map((b) => answer(s, 'sample-08#1', b)))).map((r) => r.status);
    expect(statuses.filter((x) => x === 200)).toHaveLength(1);
    expect(statuses.filter((x) => x === 409)).toHaveLength(4);
    const sent = (await createLocalMailbox((store as TroupeStore).documents).sent()).filter((m) =>
      m.to.includes('dana@acme.dev'),
    );
    expect(sent.length).toBeLessThanOrEqual(1);
    const winner = bodies[statuses.indexOf(200)];
    expect(sent.length).toBe(winner?.type === 'accept' || winner?.type === 'edit' ? 1 : 0);
    expect(
      s.studioStore.getSnapshot().context.answered.filter((a) => a.interruptId === 'sample-08#1'),
    ).toHaveLength(1);
  });

  it('refuses a draft edit with bad values, naming the field, and keeps the interrupt and its draft as they were', async () => {
    const s = await open();
    const before = s.studioStore.getSnapshot().context.interrupts.find((i) => i.id === 'sample-03#1');
    for (const args of [{ to: 123 }, { content: '   ' }, '{not json', { to: '' }]) {
      const reply = await answer(s, 'sample-03#1', { type: 'edit', args });
      expect(reply.status).toBe(400);
      const { error } = (await reply.json()) as { error: { code: string; message: string } };
      expect(error.code).toBe('TROUPE_INBOX_INVALID');
      expect(error.message).toMatch(/send_email_tool: (to|content|the edited arguments are not JSON)/u);
    }
    const after = s.studioStore.getSnapshot().context.interrupts.find((i) => i.id === 'sample-03#1');
    expect(after?.args).toEqual(before?.args);
    expect((await s.assistant.interrupt('sample-03#1'))?.status).toBe('pending');
    expect(await createLocalMailbox((store as TroupeStore).documents).sent()).toEqual([]);
  });

  it('closes with live streams open, one of them no longer reading', async () => {
    const s = await open();
    const reader = liveStream(s.port, s.token, true);
    const stalled = liveStream(s.port, s.token, false);
    await reader.until(s.studioStore.getSnapshot().context.version);
    s.studioStore.send({ type: 'ticked', now: s.clock.now() + 1 });
    await reader.until(s.studioStore.getSnapshot().context.version);
    await s.close();
    studio = undefined;
    reader.close();
    stalled.close();
  });

  it('reads Host variants as a browser would send them: loopback spellings pass, other names and no Host are refused', async () => {
    const s = await open();
    const status = async (host: string) =>
      (
        await rawExchange(
          s.port,
          `GET /api/state HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${s.token}\r\nConnection: close\r\n\r\n`,
        )
      ).slice(9, 12);
    for (const host of [`LOCALHOST:${s.port}`, `127.0.0.1.:${s.port}`, `[::1]:${s.port}`])
      expect(await status(host), host).toBe('200');
    for (const host of [
      `evil.example.:${s.port}`,
      `EVIL.example:${s.port}`,
      `127.0.0.1:${s.port}@evil.example`,
      `localhost:${s.port}/x`,
      `127.0.0.1`,
      '',
    ])
      expect(await status(host), host).toBe('403');
    // HTTP/1.0 without any Host header.
    const bare = await rawExchange(
      s.port,
      `GET /api/state HTTP/1.0\r\nAuthorization: Bearer ${s.token}\r\n\r\n`,
    );
    expect(bare).toMatch(/^HTTP\/1\.1 403 /u);
    expect(bare).toContain('TROUPE_STUDIO_HOST');
  });

  it('refuses a cross-site form POST (text/plain, no token, Origin of the other site or null)', async () => {
    const s = await open();
    for (const origin of ['http://evil.example', 'null', undefined]) {
      const reply = await fetch(`${s.url}api/inbox/${encodeURIComponent('sample-02#1')}/answer`, {
        method: 'POST',
        headers: { 'Content-Type': 'text/plain', ...(origin ? { Origin: origin } : {}) },
        body: '{"type":"ignore"}',
      });
      expect(reply.status, String(origin)).toBe(origin ? 403 : 401);
    }
    expect((await s.assistant.interrupt('sample-02#1'))?.status).toBe('pending');
  });

  it('takes a client that goes away halfway through its body calmly: no error in the log, nothing posted', async () => {
    const lines: string[] = [];
    store = createMemoryStore();
    const s = await openStudio({
      clock: new SimulatedClock(1_795_718_400_000),
      port: 0,
      store,
      logger: createLogger({
        level: 'debug',
        destination: { write: (line: string) => void lines.push(line) },
      }),
    });
    studio = s;
    const socket = connect(s.port, '127.0.0.1');
    const closed = new Promise((resolve) => socket.on('close', resolve));
    socket.on('error', () => undefined);
    // The server answers `100 Continue` as it hands the request on: then the client goes.
    socket.once('data', () => socket.destroy());
    socket.write(
      `POST /api/playground/message HTTP/1.1\r\nHost: 127.0.0.1:${s.port}\r\n` +
        `Authorization: Bearer ${s.token}\r\nContent-Length: 20\r\nExpect: 100-continue\r\n\r\n`,
    );
    await closed;
    // The server notes it at debug level, and nothing at warn or above.
    await expect.poll(() => lines.some((l) => l.includes('went away'))).toBe(true);
    expect(lines.filter((l) => (JSON.parse(l) as { level: number }).level >= 40)).toEqual([]);
    expect(s.studioStore.getSnapshot().context.playground.messages).toHaveLength(0);
  });
});
