import { mkdtemp, writeFile } from 'node:fs/promises';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { SimulatedClock } from '../../src/actors/clock.js';
import type { EmailRecord } from '../../src/actors/email/emailRecord.js';
import { createMemoryStore } from '../../src/adapters/store/memory/memoryStore.js';
import type { AgentModel } from '../../src/ports/agentModel.js';
import { type OpenedStudio, openStudio } from '../../src/studio/openStudio.js';
import { startStudioServer } from '../../src/studio/studioServer.js';
import type { StudioState } from '../../src/studio/studioState.js';
import { createStudioStore } from '../../src/studio/studioStore.js';
import { assistantOn, EMAIL_START } from '../support/emailHarness.js';

interface Reply {
  status: number;
  headers: IncomingMessage['headers'];
  body: string;
  json: () => { error?: { code: string; message: string } } & Record<string, unknown>;
}

/** One HTTP request with full control of the headers (Host and Origin included). */
function request(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string | Buffer; host?: string } = {},
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const target = new URL(url);
    const req = httpRequest(
      {
        host: options.host ?? target.hostname,
        port: target.port,
        path: `${target.pathname}${target.search}`,
        method: options.method ?? 'GET',
        headers: options.headers ?? {},
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const body = Buffer.concat(chunks).toString('utf8');
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body, json: () => JSON.parse(body) });
        });
      },
    );
    req.on('error', reject);
    if (options.body !== undefined) req.write(options.body);
    req.end();
  });
}

/** Reads Server-Sent Events; `next()` resolves with the next `state` event's data. */
function openStream(url: string, headers: Record<string, string> = {}) {
  const states: StudioState[] = [];
  const waiting: (() => void)[] = [];
  let status = 0;
  let contentType = '';
  let closed = false;
  let buffer = '';
  const req = httpRequest(url, { headers }, (res) => {
    status = res.statusCode ?? 0;
    contentType = String(res.headers['content-type']);
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => {
      buffer += chunk;
      for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const data = block
          .split('\n')
          .filter((l) => l.startsWith('data: '))
          .map((l) => l.slice(6))
          .join('\n');
        if (block.includes('event: state')) states.push(JSON.parse(data) as StudioState);
      }
      for (const w of waiting.splice(0)) w();
    });
    res.on('end', () => {
      closed = true;
      for (const w of waiting.splice(0)) w();
    });
  });
  req.on('error', () => {
    closed = true;
    for (const w of waiting.splice(0)) w();
  });
  req.end();
  return {
    states,
    get status() {
      return status;
    },
    get contentType() {
      return contentType;
    },
    get closed() {
      return closed;
    },
    /** Waits for the stream's events (no wall-clock deadline) until a state passes `test`. */
    async until(test: (s: StudioState) => boolean): Promise<StudioState> {
      for (;;) {
        const found = states.find(test);
        if (found) return found;
        if (closed) throw new Error('the stream ended without such a state');
        await new Promise<void>((resolve) => waiting.push(resolve));
      }
    },
    /** Waits until the server ends the stream. */
    async ended(): Promise<void> {
      while (!closed) await new Promise<void>((resolve) => waiting.push(resolve));
    },
    close: () => req.destroy(),
  };
}

let staticDir: string;
beforeAll(async () => {
  staticDir = await mkdtemp(join(tmpdir(), 'troupe-studio-static-'));
  await writeFile(join(staticDir, 'index.html'), '<!doctype html><title>Studio test page</title>');
  await writeFile(join(staticDir, 'app.js'), 'export const page = 1;');
});

const opened: OpenedStudio[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((s) => s.close()));
});

async function studio(options: { host?: string } = {}): Promise<OpenedStudio> {
  const s = await openStudio({ clock: new SimulatedClock(), port: 0, staticDir, ...options });
  opened.push(s);
  return s;
}

const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });
const json = { 'Content-Type': 'application/json' };

const apiRoutes: [string, string, string?][] = [
  ['GET', '/api/state'],
  ['GET', '/api/charts'],
  ['GET', '/api/avatars'],
  ['GET', '/api/events'],
  ['POST', '/api/inbox/sample-02%231/answer', '{"type":"ignore"}'],
  ['POST', '/api/email/sample-02/retry'],
  ['POST', '/api/playground/message', '{"text":"hi"}'],
  ['POST', '/api/playground/summon', '{"avatarId":"rex"}'],
  ['POST', '/api/playground/dismiss', '{"avatarId":"luna"}'],
  ['POST', '/api/playground/create', '{"name":"Gandalf"}'],
];

describe('the studio server refuses what it must', () => {
  it('answers 401 on every /api route without the token or with a wrong one, and changes nothing', async () => {
    const s = await studio();
    const before = s.studioStore.getSnapshot().context.version;
    const wrong = `${s.token.slice(0, -1)}${s.token.endsWith('A') ? 'B' : 'A'}`;
    for (const [method, path, body] of apiRoutes) {
      for (const headers of [{}, bearer(wrong), bearer('short'), { Authorization: s.token }]) {
        const reply = await request(`${s.url}${path.slice(1)}`, {
          method,
          headers: { ...headers, ...json },
          ...(body ? { body } : {}),
        });
        expect(reply.status, `${method} ${path}`).toBe(401);
        expect(reply.json().error?.code).toBe('TROUPE_STUDIO_UNAUTHORIZED');
        expect(reply.headers['cache-control']).toBe('no-store');
      }
    }
    expect(s.studioStore.getSnapshot().context.version).toBe(before);
    expect((await s.assistant.pending()).map((p) => p.id)).toContain('sample-02#1');
  });

  it('takes ?token= only on /api/events', async () => {
    const s = await studio();
    const query = `?token=${encodeURIComponent(s.token)}`;
    expect((await request(`${s.url}api/state${query}`)).status).toBe(401);
    expect((await request(`${s.url}api/charts${query}`)).status).toBe(401);
    const stream = openStream(`${s.url}api/events${query}`);
    await stream.until(() => true);
    expect(stream.status).toBe(200);
    expect(stream.contentType).toMatch(/^text\/event-stream/u);
    stream.close();
    const wrong = openStream(`${s.url}api/events?token=nope`);
    await wrong.ended();
    expect(wrong.status).toBe(401);
  });

  it('refuses a foreign Origin (403) and a foreign Host (403), with or without the token', async () => {
    const s = await studio();
    for (const origin of [
      'http://evil.example',
      `http://evil.example:${s.port}`,
      `https://127.0.0.1:${s.port}`,
      'null',
    ]) {
      const reply = await request(`${s.url}api/state`, { headers: { ...bearer(s.token), Origin: origin } });
      expect(reply.status, origin).toBe(403);
      expect(reply.json().error?.code).toBe('TROUPE_STUDIO_ORIGIN');
    }
    const post = await request(`${s.url}api/playground/summon`, {
      method: 'POST',
      headers: { ...bearer(s.token), ...json, Origin: 'http://evil.example' },
      body: '{"avatarId":"rex"}',
    });
    expect(post.status).toBe(403);
    // Its own origin, by any of its names, is fine.
    for (const origin of [`http://127.0.0.1:${s.port}`, `http://localhost:${s.port}`]) {
      expect(
        (await request(`${s.url}api/state`, { headers: { ...bearer(s.token), Origin: origin } })).status,
      ).toBe(200);
    }
    // DNS rebinding: a page of another name that resolves here.
    for (const host of [`evil.example:${s.port}`, 'evil.example', `127.0.0.1:${s.port + 1}`]) {
      const reply = await request(`${s.url}api/state`, { headers: { ...bearer(s.token), Host: host } });
      expect(reply.status, host).toBe(403);
      expect(reply.json().error?.code).toBe('TROUPE_STUDIO_HOST');
      expect((await request(s.url, { headers: { Host: host } })).status).toBe(403);
    }
    expect(
      (await request(`${s.url}api/state`, { headers: { ...bearer(s.token), Host: `localhost:${s.port}` } }))
        .status,
    ).toBe(200);
  });

  it('listens on 127.0.0.1 by default, and where --host says otherwise', async () => {
    const local = await studio();
    expect(local.url).toBe(`http://127.0.0.1:${local.port}/`);
    // 127.0.0.2 is loopback too, but not the address it is bound to.
    await expect(
      request(`http://127.0.0.2:${local.port}/api/state`, { headers: bearer(local.token) }),
    ).rejects.toThrow(/ECONNREFUSED/u);
    const everywhere = await studio({ host: '0.0.0.0' });
    const reply = await request(`http://127.0.0.2:${everywhere.port}/api/state`, {
      headers: bearer(everywhere.token),
    });
    expect(reply.status).toBe(200);
  });

  it('answers a bad body with 400 and a code naming the field, and unknown things with 404', async () => {
    const s = await studio();
    const post = (path: string, body: string | Buffer) =>
      request(`${s.url}${path}`, { method: 'POST', headers: { ...bearer(s.token), ...json }, body });
    const cases: [string, string | Buffer, RegExp][] = [
      ['api/playground/message', '{"text": 5}', /text/u],
      ['api/playground/message', '{"text": "  "}', /text/u],
      ['api/playground/message', 'not json', /not JSON/u],
      ['api/playground/message', Buffer.alloc(70 * 1024, 'a'), /64|65536/u],
      ['api/playground/summon', '{}', /avatarId/u],
      ['api/inbox/sample-02%231/answer', '{"type":"maybe"}', /type/u],
    ];
    for (const [path, body, named] of cases) {
      const reply = await post(path, body);
      expect(reply.status, path).toBe(400);
      expect(reply.json().error?.code).toBe('TROUPE_STUDIO_BAD_REQUEST');
      expect(reply.json().error?.message).toMatch(named);
    }
    const unknownAvatar = await post('api/playground/summon', '{"avatarId":"nobody"}');
    expect([unknownAvatar.status, unknownAvatar.json().error?.code]).toEqual([400, 'TROUPE_AVATAR_UNKNOWN']);
    const notAllowed = await post('api/inbox/sample-02%231/answer', '{"type":"accept"}');
    expect([notAllowed.status, notAllowed.json().error?.code]).toEqual([400, 'TROUPE_INBOX_INVALID']);

    const missing = await request(`${s.url}api/nothing`, { headers: bearer(s.token) });
    expect([missing.status, missing.json().error?.code]).toEqual([404, 'TROUPE_STUDIO_NOT_FOUND']);
    const wrongMethod = await request(`${s.url}api/state`, { method: 'DELETE', headers: bearer(s.token) });
    expect(wrongMethod.status).toBe(404);
    const noInterrupt = await post('api/inbox/nope%231/answer', '{"type":"ignore"}');
    expect([noInterrupt.status, noInterrupt.json().error?.code]).toEqual([404, 'TROUPE_INBOX_INVALID']);
    const badId = await post('api/inbox/%E0%A4%A/answer', '{"type":"ignore"}');
    expect([badId.status, badId.json().error?.code]).toEqual([404, 'TROUPE_STUDIO_NOT_FOUND']);
    expect(
      (await request(`http://127.0.0.1:${s.port}//api/state`, { headers: bearer(s.token) })).status,
    ).toBe(404);
    expect((await request(`${s.url}missing.js`)).status).toBe(404);
    expect((await request(`${s.url}..%2f..%2fpackage.json`)).status).toBe(404);
    expect((await request(`${s.url}%2e%2e/%2e%2e/package.json`)).status).toBe(404);
  });
});

describe('the studio server serves', () => {
  it('the page files without the token, with the security headers', async () => {
    const s = await studio();
    const page = await request(s.url);
    expect(page.status).toBe(200);
    expect(page.body).toContain('Studio test page');
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.headers['content-security-policy']).toBe(
      "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'",
    );
    expect(page.headers['x-content-type-options']).toBe('nosniff');
    expect(page.headers['access-control-allow-origin']).toBeUndefined();
    const script = await request(`${s.url}app.js`);
    expect([script.status, script.headers['content-type']]).toEqual([200, 'text/javascript; charset=utf-8']);
  });

  it('the state, the charts with their state ids, and the avatars', async () => {
    const s = await studio();
    const state = (
      await request(`${s.url}api/state`, { headers: bearer(s.token) })
    ).json() as unknown as StudioState;
    expect(state.interrupts.length).toBeGreaterThan(0);
    expect(state.playground.channel).toEqual({ platform: 'terminal', id: 'observatory' });
    const charts = (await request(`${s.url}api/charts`, { headers: bearer(s.token) })).json().charts as {
      id: string;
      svg: string;
    }[];
    expect(charts.map((c) => c.id)).toEqual([
      'conversationThread',
      'avatarPresence',
      'pendingChoice',
      'emailLifecycle',
    ]);
    // Every state id an actor shows is an element of its chart.
    for (const actor of state.actors) {
      const chart = charts.find((c) => c.id === actor.machine);
      for (const id of actor.stateIds) expect(chart?.svg).toContain(`id="state:${id}"`);
    }
    const avatars = (await request(`${s.url}api/avatars`, { headers: bearer(s.token) })).json().avatars;
    expect(avatars).toEqual(state.playground.avatars);
  });

  it('the live stream: the current state first, then an update after a change; ended on close', async () => {
    const s = await studio();
    const stream = openStream(`${s.url}api/events`, bearer(s.token));
    const first = await stream.until(() => true);
    expect(first.version).toBe(s.studioStore.getSnapshot().context.version);
    expect(first.playground.avatars.find((a) => a.id === 'rex')?.present).toBe(false);
    const summon = await request(`${s.url}api/playground/summon`, {
      method: 'POST',
      headers: { ...bearer(s.token), ...json },
      body: '{"avatarId":"rex"}',
    });
    expect(summon.status).toBe(202);
    await s.advance(0);
    const updated = await stream.until(
      (st) => st.playground.avatars.find((a) => a.id === 'rex')?.present === true,
    );
    expect(updated.version).toBeGreaterThan(first.version);
    expect(updated.playground.messages.some((m) => m.author.id === 'rex')).toBe(true);
    await s.close();
    await stream.ended();
    expect(stream.closed).toBe(true);
  });

  it('the live stream coalesces a burst of changes into one update', async () => {
    const s = await studio();
    const stream = openStream(`${s.url}api/events`, bearer(s.token));
    const first = await stream.until(() => true);
    for (let i = 1; i <= 100; i += 1) s.studioStore.send({ type: 'ticked', now: first.now + i });
    const last = await stream.until((st) => st.version === first.version + 100);
    expect(last.now).toBe(first.now + 100);
    // The first state, then one state for the whole burst.
    expect(stream.states).toHaveLength(2);
    stream.close();
  });

  it('an answer posted moves the email on, and a second answer is refused with 409', async () => {
    const s = await studio();
    const answer = (body: string) =>
      request(`${s.url}api/inbox/${encodeURIComponent('sample-02#1')}/answer`, {
        method: 'POST',
        headers: { ...bearer(s.token), ...json },
        body,
      });
    const reply = await answer(JSON.stringify({ type: 'response', args: 'When can we see a demo?' }));
    expect(reply.status).toBe(200);
    const body = reply.json() as { item: { status: string }; emailState: unknown };
    expect(body.item.status).toBe('answered');
    expect(body.emailState).not.toBe('notifying');
    const state = (
      await request(`${s.url}api/state`, { headers: bearer(s.token) })
    ).json() as unknown as StudioState;
    expect(state.interrupts.map((i) => i.id)).not.toContain('sample-02#1');
    expect(state.answered[0]).toMatchObject({ interruptId: 'sample-02#1', type: 'response' });
    expect(state.answered[0]?.memory?.version).toBeGreaterThanOrEqual(1);
    expect(state.actors.find((a) => a.id === 'email:sample-02')?.value).toEqual(body.emailState);
    const again = await answer('{"type":"ignore"}');
    expect([again.status, again.json().error?.code]).toEqual([409, 'TROUPE_INBOX_INVALID']);
  });

  it('a playground message gets an id, and an avatar named in it answers', async () => {
    const s = await studio();
    const posted = await request(`${s.url}api/playground/message`, {
      method: 'POST',
      headers: { ...bearer(s.token), ...json },
      body: JSON.stringify({ text: 'Hi Luna! Seen any comets?' }),
    });
    expect(posted.status).toBe(202);
    const { id } = posted.json() as { id: string };
    await s.advance(0);
    const { messages } = s.studioStore.getSnapshot().context.playground;
    expect(messages[0]).toMatchObject({ id, author: { kind: 'human' }, text: 'Hi Luna! Seen any comets?' });
    expect(messages.find((m) => m.author.id === 'luna')?.why).toBeTruthy();
  });
});

describe('the studio retries a failed email', () => {
  it('POST /api/email/<id>/retry runs it again; an unknown email is 404, one not failed 409', async () => {
    const store = createMemoryStore();
    const looping: AgentModel = {
      id: 'test:looping',
      nextToolCall: async () => ({
        toolCallId: 'x',
        toolName: 'check_calendar_availability_tool',
        input: { day: '2026-11-30', time_zone: 'UTC' },
      }),
    };
    const { assistant } = assistantOn(store, new SimulatedClock(EMAIL_START), undefined, {
      agentModel: looping,
    });
    const meeting = {
      id: 'loop-1',
      from: 'Ben <ben@customer.example>',
      to: 'sam@acme.dev',
      subject: 'Meeting next week?',
      body: 'Would you have 30 minutes for a call?',
    };
    expect(((await assistant.receive(meeting)) as EmailRecord).state.value).toBe('failed');
    const s = await openStudio({ clock: new SimulatedClock(EMAIL_START), port: 0, staticDir, store });
    opened.push(s);
    const post = (path: string) =>
      request(`${s.url}${path}`, { method: 'POST', headers: { ...bearer(s.token), ...json }, body: '{}' });
    const retried = await post('api/email/loop-1/retry');
    expect(retried.status).toBe(200);
    // The studio's assistant is offline: it books the first free slot for review.
    expect(retried.json()).toEqual({ emailState: { responding: 'reviewing' } });
    const again = await post('api/email/loop-1/retry');
    expect([again.status, again.json().error?.code]).toEqual([409, 'TROUPE_INBOX_INVALID']);
    const unknown = await post('api/email/nope/retry');
    expect([unknown.status, unknown.json().error?.code]).toEqual([404, 'TROUPE_INBOX_INVALID']);
  });
});

describe('the studio token', () => {
  it('is refused at start when it could not travel in an Authorization: Bearer header', async () => {
    const start = (token: string) =>
      startStudioServer({
        store: createStudioStore({ now: 0 }),
        port: 0,
        token,
        staticDir,
        charts: async () => [],
        actions: {
          answer: async () => ({ item: null, emailState: null }),
          retry: async () => ({ emailState: null }),
          post: () => ({ id: 'm' }),
          summon: () => undefined,
          dismiss: () => undefined,
          create: async () => ({ avatar: { id: 'a', name: 'A' }, created: false }),
        },
      });
    for (const token of ['has space', 'naïve', 'a=b', ''])
      await expect(start(token), token).rejects.toMatchObject({ code: 'TROUPE_CONFIG_INVALID' });
    const server = await start('given-token_1.2~3+4/5==');
    const reply = await request(`${server.url}api/state`, { headers: bearer('given-token_1.2~3+4/5==') });
    expect(reply.status).toBe(200);
    await server.close();
  });
});
