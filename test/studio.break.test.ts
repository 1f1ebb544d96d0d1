import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { SimulatedClock } from '../src/actors/clock.js';
import { type OpenedStudio, openStudio } from '../src/studio/openStudio.js';

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

let studio: OpenedStudio | undefined;
afterEach(async () => {
  await studio?.close();
  studio = undefined;
});

const open = async (options: { bodyTimeoutMs?: number } = {}) => {
  studio = await openStudio({ clock: new SimulatedClock(1_795_718_400_000), port: 0, ...options });
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
});
