/**
 * A small fake of Google's Gmail v1, Calendar v3 and OAuth token endpoints on one loopback port,
 * for tests that drive the real googleapis client (pointed here with `rootUrl`) and the real
 * google-auth-library (its `oauth2TokenUrl`).
 *
 * One mailbox: inbox messages the test adds (each a `messageAdded` history record), sent mail
 * (the `raw` the client sent, decoded), labels, a calendar's busy times and inserted events.
 * Every request is recorded (method, path, query, parsed body). Failures can be injected per
 * route: a status with headers (429 with Retry-After, 5xx), once or several times, optionally
 * after carrying the request out (`actThenFail`: Gmail sent it, then answered 500). History older
 * than `minHistoryId` answers 404, as Gmail does for a stale `startHistoryId`. A listing's `q`
 * understands `rfc822msgid:`, `after:<epoch seconds>` and, when `now` is set, `newer_than:<n>d`. Refresh tokens
 * can be revoked (the token endpoint answers `invalid_grant`) and access tokens refused (401).
 * The token endpoint also exchanges sign-in codes the test issues (`authorizeCode`, as Google's
 * consent page would), once each, checking the redirect URI and the PKCE verifier.
 */
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A request the fake received. */
export interface GoogleRequest {
  method: string;
  path: string;
  query: Record<string, string | string[]>;
  headers: IncomingMessage['headers'];
  /** JSON body parsed, a form body as an object, or the raw text. */
  body: unknown;
}

/** A message in the fake mailbox. */
export interface FakeMessage {
  id: string;
  threadId: string;
  labelIds: string[];
  historyId: number;
  /** When Gmail received it (epoch ms, from the Date header), which `after:` and `newer_than:` search. */
  internalDate: number;
  headers: { name: string; value: string }[];
  /** The MIME tree Gmail returns with `format=full`. */
  payload: Record<string, unknown>;
  /** For sent mail: the decoded RFC 2822 text the client sent. */
  rawText?: string;
}

/** An email the test puts in the inbox. */
export interface IncomingEmail {
  id?: string;
  threadId?: string;
  from: string;
  to?: string;
  subject: string;
  /** text/plain body; with `html` too, a multipart/alternative. */
  text?: string;
  html?: string;
  messageId?: string;
  references?: string;
  date?: string;
  /** Default INBOX and UNREAD. */
  labelIds?: string[];
}

/** A failure to inject. */
export interface Injection {
  method?: string;
  /** Matched against the path (without the query). */
  path: RegExp;
  status: number;
  headers?: Record<string, string>;
  body?: unknown;
  /** How many requests it fails (default 1). */
  times?: number;
  /** Carry the request out first, then answer with the failure. */
  actThenFail?: boolean;
}

/** What the consent page granted: a code bound to its redirect URI and PKCE challenge. */
export interface AuthorizationGrant {
  code: string;
  clientId: string;
  redirectUri: string;
  /** The S256 `code_challenge` of the consent URL. */
  codeChallenge: string;
  refreshToken: string;
  /** Granted scopes, space-separated. */
  scope: string;
}

/** A running fake. */
export interface FakeGoogle {
  /** The `rootUrl` for googleapis (ends with a slash). */
  readonly url: string;
  /** The OAuth token endpoint. */
  readonly tokenUrl: string;
  readonly address: string;
  readonly requests: GoogleRequest[];
  readonly messages: Map<string, FakeMessage>;
  readonly labels: { id: string; name: string; type: string }[];
  readonly events: Map<string, Record<string, unknown>>;
  /** Busy times freebusy reports (RFC 3339). */
  busy: { start: string; end: string }[];
  /** History at or before this id is gone (404). */
  minHistoryId: number;
  /** The fake's "now" for `newer_than:` searches; unset, `newer_than:` is not applied. */
  now: number | undefined;
  readonly historyId: number;
  /** Messages per page when the client asks for more (to test paging). */
  pageSize: number;
  addEmail(email: IncomingEmail): FakeMessage;
  /** Sent mail, oldest first, with headers read from the raw. */
  sent(): { message: FakeMessage; header(name: string): string | undefined; body: string }[];
  inject(injection: Injection): void;
  /** An access token the API accepts without a refresh. */
  acceptAccessToken(token: string): void;
  /** Refuse every access token (401), issued or accepted. */
  refuseAccessTokens(): void;
  revokeRefreshToken(token: string): void;
  /** A sign-in code the token endpoint exchanges once for `refreshToken` (and an access token). */
  authorizeCode(grant: AuthorizationGrant): void;
  /** Requests to the API (not the token endpoint), by `METHOD path`. */
  calls(): string[];
  close(): Promise<void>;
}

const json = (
  response: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
) => {
  response.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers });
  response.end(JSON.stringify(body));
};

const apiError = (code: number, message: string, reason?: string) => ({
  error: { code, message, ...(reason ? { errors: [{ reason, message }] } : {}) },
});

/** Headers of an RFC 2822 text (unfolded), and its body. */
export function parseRfc2822(text: string): { headers: Map<string, string>; body: string } {
  const split = text.indexOf('\r\n\r\n');
  const head = split === -1 ? text : text.slice(0, split);
  const headers = new Map<string, string>();
  for (const line of head.replace(/\r\n[ \t]+/gu, ' ').split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon > 0) headers.set(line.slice(0, colon).toLowerCase(), line.slice(colon + 1).trim());
  }
  return { headers, body: split === -1 ? '' : text.slice(split + 4) };
}

/** Decodes RFC 2047 encoded words (B and Q, UTF-8). */
export function decodeWords(value: string): string {
  return value
    .replace(/\?=\s+=\?/gu, '?==?')
    .replace(/=\?utf-8\?([bq])\?([^?]*)\?=/giu, (_, enc: string, data: string) =>
      enc.toLowerCase() === 'b'
        ? Buffer.from(data, 'base64').toString('utf8')
        : Buffer.from(
            data
              .replace(/_/gu, ' ')
              .replace(/=([0-9a-f]{2})/giu, (_m, h: string) => String.fromCharCode(Number.parseInt(h, 16))),
            'latin1',
          ).toString('utf8'),
    );
}

const b64url = (text: string) => Buffer.from(text, 'utf8').toString('base64url');

export async function startFakeGoogle(options: { address?: string } = {}): Promise<FakeGoogle> {
  const address = options.address ?? 'sam@example.com';
  const requests: GoogleRequest[] = [];
  const messages = new Map<string, FakeMessage>();
  const labels: { id: string; name: string; type: string }[] = [
    { id: 'INBOX', name: 'INBOX', type: 'system' },
    { id: 'SENT', name: 'SENT', type: 'system' },
    { id: 'UNREAD', name: 'UNREAD', type: 'system' },
  ];
  const events = new Map<string, Record<string, unknown>>();
  const history: { id: number; messageId: string }[] = [];
  const injections: (Injection & { left: number })[] = [];
  const accessTokens = new Set<string>();
  const revoked = new Set<string>();
  const codes = new Map<string, AuthorizationGrant>();
  let refuseAll = false;
  let historyId = 1000;
  let seq = 0;
  let issued = 0;

  const nextHistory = () => {
    historyId += 1;
    return historyId;
  };

  function addMessage(message: Omit<FakeMessage, 'historyId' | 'internalDate'>, inbox: boolean): FakeMessage {
    const date = Date.parse(message.headers.find((h) => h.name.toLowerCase() === 'date')?.value ?? '');
    const stored: FakeMessage = {
      ...message,
      historyId: nextHistory(),
      internalDate: Number.isFinite(date) ? date : (fake.now ?? Date.now()),
    };
    messages.set(stored.id, stored);
    if (inbox) history.push({ id: stored.historyId, messageId: stored.id });
    return stored;
  }

  function addEmail(email: IncomingEmail): FakeMessage {
    seq += 1;
    const id = email.id ?? `m${String(seq).padStart(4, '0')}`;
    const headers = [
      { name: 'From', value: email.from },
      { name: 'To', value: email.to ?? address },
      { name: 'Subject', value: email.subject },
      { name: 'Date', value: email.date ?? 'Wed, 25 Nov 2026 08:00:00 +0000' },
      { name: 'Message-ID', value: email.messageId ?? `<${id}@mail.example>` },
      ...(email.references ? [{ name: 'References', value: email.references }] : []),
    ];
    const plain =
      email.text === undefined
        ? undefined
        : {
            mimeType: 'text/plain',
            filename: '',
            headers: [{ name: 'Content-Type', value: 'text/plain; charset="UTF-8"' }],
            body: { size: email.text.length, data: b64url(email.text) },
          };
    const html =
      email.html === undefined
        ? undefined
        : {
            mimeType: 'text/html',
            filename: '',
            headers: [{ name: 'Content-Type', value: 'text/html; charset="UTF-8"' }],
            body: { size: email.html.length, data: b64url(email.html) },
          };
    const payload =
      plain && html
        ? {
            mimeType: 'multipart/alternative',
            filename: '',
            headers,
            body: { size: 0 },
            parts: [plain, html],
          }
        : { ...(plain ?? html ?? { mimeType: 'text/plain', body: { size: 0, data: '' } }), headers };
    return addMessage(
      {
        id,
        threadId: email.threadId ?? `t-${id}`,
        labelIds: email.labelIds ?? ['INBOX', 'UNREAD'],
        headers,
        payload,
      },
      true,
    );
  }

  const listOf = (value: string | string[] | undefined) =>
    value === undefined ? [] : Array.isArray(value) ? value : [value];

  async function readBody(request: IncomingMessage): Promise<unknown> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    if (text === '') return undefined;
    if ((request.headers['content-type'] ?? '').includes('application/x-www-form-urlencoded'))
      return Object.fromEntries(new URLSearchParams(text));
    try {
      return JSON.parse(text);
    } catch {
      return text;
    }
  }

  function exchangeCode(body: Record<string, string>, response: ServerResponse) {
    const grant = codes.get(body.code ?? '');
    const verifier = createHash('sha256')
      .update(body.code_verifier ?? '')
      .digest('base64url');
    if (
      !grant ||
      grant.redirectUri !== body.redirect_uri ||
      grant.clientId !== body.client_id ||
      grant.codeChallenge !== verifier
    )
      return json(response, 400, { error: 'invalid_grant', error_description: 'Bad Request' });
    codes.delete(grant.code);
    issued += 1;
    const token = `ya29.fake-${issued}`;
    accessTokens.add(token);
    return json(response, 200, {
      access_token: token,
      refresh_token: grant.refreshToken,
      expires_in: 3599,
      token_type: 'Bearer',
      scope: grant.scope,
    });
  }

  function handleToken(body: Record<string, string>, response: ServerResponse) {
    if (body.grant_type === 'authorization_code') return exchangeCode(body, response);
    if (body.grant_type !== 'refresh_token' || !body.refresh_token)
      return json(response, 400, { error: 'invalid_request', error_description: 'Missing refresh_token.' });
    if (revoked.has(body.refresh_token))
      return json(response, 400, {
        error: 'invalid_grant',
        error_description: 'Token has been expired or revoked.',
      });
    issued += 1;
    const token = `ya29.fake-${issued}`;
    accessTokens.add(token);
    return json(response, 200, {
      access_token: token,
      expires_in: 3599,
      token_type: 'Bearer',
      scope: 'https://www.googleapis.com/auth/gmail.modify https://www.googleapis.com/auth/calendar.events',
    });
  }

  /** Carries a request out; returns the status and body to answer with. */
  // biome-ignore lint/suspicious/noExplicitAny: request bodies are loosely shaped JSON, read field by field
  function act(method: string, path: string, query: GoogleRequest['query'], body: any): [number, unknown] {
    const gmail = /^\/gmail\/v1\/users\/me(\/.*)?$/u.exec(path);
    if (gmail) {
      const rest = gmail[1] ?? '';
      if (method === 'GET' && rest === '/profile')
        return [
          200,
          {
            emailAddress: address,
            messagesTotal: messages.size,
            threadsTotal: messages.size,
            historyId: String(historyId),
          },
        ];
      if (method === 'GET' && rest === '/history') {
        const start = Number(query.startHistoryId);
        if (!Number.isFinite(start) || start < fake.minHistoryId)
          return [404, apiError(404, 'Requested entity was not found.', 'notFound')];
        // Only inbox arrivals are recorded, so every record matches labelId=INBOX.
        const matching = history.filter((h) => h.id > start);
        const size = Math.min(Number(query.maxResults ?? 100), fake.pageSize);
        const offset = Number(query.pageToken ?? 0);
        const page = matching.slice(offset, offset + size);
        return [
          200,
          {
            history: page.length
              ? page.map((h) => {
                  const m = messages.get(h.messageId);
                  return {
                    id: String(h.id),
                    messagesAdded: [
                      { message: { id: h.messageId, threadId: m?.threadId, labelIds: m?.labelIds } },
                    ],
                  };
                })
              : undefined,
            historyId: String(historyId),
            ...(offset + size < matching.length ? { nextPageToken: String(offset + size) } : {}),
          },
        ];
      }
      if (method === 'GET' && rest === '/messages') {
        const wanted = listOf(query.labelIds);
        const q = String(query.q ?? '');
        const msgid = /rfc822msgid:(\S+)/u.exec(q)?.[1]?.replace(/^<|>$/gu, '');
        const after = /(?:^|\s)after:(\d+)(?:\s|$)/u.exec(q)?.[1];
        const newerDays = /(?:^|\s)newer_than:(\d+)d(?:\s|$)/u.exec(q)?.[1];
        const since = Math.max(
          after === undefined ? -Infinity : Number(after) * 1000,
          newerDays === undefined || fake.now === undefined
            ? -Infinity
            : fake.now - Number(newerDays) * 86_400_000,
        );
        const found = [...messages.values()]
          .filter((m) => wanted.every((l) => m.labelIds.includes(l)))
          .filter((m) => m.internalDate > since)
          .filter(
            (m) =>
              !msgid ||
              m.headers.some(
                (h) => h.name.toLowerCase() === 'message-id' && h.value.replace(/^<|>$/gu, '') === msgid,
              ),
          )
          .reverse();
        const size = Math.min(Number(query.maxResults ?? 100), fake.pageSize);
        const offset = Number(query.pageToken ?? 0);
        const page = found.slice(offset, offset + size);
        return [
          200,
          {
            ...(page.length ? { messages: page.map((m) => ({ id: m.id, threadId: m.threadId })) } : {}),
            resultSizeEstimate: found.length,
            ...(offset + size < found.length ? { nextPageToken: String(offset + size) } : {}),
          },
        ];
      }
      if (method === 'POST' && rest === '/messages/send') {
        const rawText = Buffer.from(String(body?.raw ?? ''), 'base64url').toString('utf8');
        const { headers } = parseRfc2822(rawText);
        seq += 1;
        const id = `s${String(seq).padStart(4, '0')}`;
        const threadId = typeof body?.threadId === 'string' ? body.threadId : `t-${id}`;
        const stored = addMessage(
          {
            id,
            threadId,
            labelIds: ['SENT'],
            headers: [...headers].map(([name, value]) => ({ name, value })),
            payload: {},
            rawText,
          },
          false,
        );
        return [200, { id: stored.id, threadId: stored.threadId, labelIds: stored.labelIds }];
      }
      const get = /^\/messages\/([^/]+)$/u.exec(rest);
      if (method === 'GET' && get) {
        const m = messages.get(decodeURIComponent(get[1] ?? ''));
        if (!m) return [404, apiError(404, 'Requested entity was not found.', 'notFound')];
        return [
          200,
          {
            id: m.id,
            threadId: m.threadId,
            labelIds: m.labelIds,
            historyId: String(m.historyId),
            internalDate: String(m.internalDate),
            snippet: '',
            payload: m.payload,
          },
        ];
      }
      const modify = /^\/messages\/([^/]+)\/modify$/u.exec(rest);
      if (method === 'POST' && modify) {
        const m = messages.get(decodeURIComponent(modify[1] ?? ''));
        if (!m) return [404, apiError(404, 'Requested entity was not found.', 'notFound')];
        for (const l of body?.addLabelIds ?? []) {
          if (!labels.some((x) => x.id === l))
            return [400, apiError(400, `Invalid label: ${l}`, 'invalidArgument')];
          if (!m.labelIds.includes(l)) m.labelIds.push(l);
        }
        m.labelIds = m.labelIds.filter((l) => !(body?.removeLabelIds ?? []).includes(l));
        m.historyId = nextHistory();
        return [200, { id: m.id, threadId: m.threadId, labelIds: m.labelIds }];
      }
      if (method === 'GET' && rest === '/labels') return [200, { labels }];
      if (method === 'POST' && rest === '/labels') {
        const name = String(body?.name ?? '');
        if (labels.some((l) => l.name.toLowerCase() === name.toLowerCase()))
          return [409, apiError(409, 'Label name exists or conflicts', 'alreadyExists')];
        const label = { id: `Label_${labels.length}`, name, type: 'user' };
        labels.push(label);
        return [200, label];
      }
    }
    if (method === 'POST' && path === '/calendar/v3/freeBusy') {
      const min = Date.parse(body?.timeMin);
      const max = Date.parse(body?.timeMax);
      const calendars: Record<string, unknown> = {};
      for (const item of body?.items ?? [])
        calendars[item.id] = {
          busy: fake.busy.filter((b) => Date.parse(b.end) > min && Date.parse(b.start) < max),
        };
      return [200, { kind: 'calendar#freeBusy', timeMin: body?.timeMin, timeMax: body?.timeMax, calendars }];
    }
    const insert = /^\/calendar\/v3\/calendars\/([^/]+)\/events$/u.exec(path);
    if (method === 'POST' && insert) {
      const id = String(body?.id ?? `e${events.size + 1}`);
      if (!/^[a-v0-9]{5,1024}$/u.test(id))
        return [400, apiError(400, 'Invalid resource id value.', 'invalid')];
      if (events.has(id))
        return [409, apiError(409, 'The requested identifier already exists.', 'duplicate')];
      const event = { ...body, id, status: 'confirmed', htmlLink: `https://calendar.example/${id}` };
      events.set(id, event);
      return [200, event];
    }
    return [404, apiError(404, `The fake has no ${method} ${path}`)];
  }

  const server = createServer(async (request, response) => {
    const url = new URL(request.url ?? '/', 'http://fake');
    const query: GoogleRequest['query'] = {};
    for (const [key, value] of url.searchParams) {
      const prior = query[key];
      query[key] = prior === undefined ? value : [...listOf(prior), value];
    }
    const body = await readBody(request);
    const method = request.method ?? 'GET';
    const recorded: GoogleRequest = { method, path: url.pathname, query, headers: request.headers, body };
    requests.push(recorded);
    const injection = injections.find(
      (i) => i.left > 0 && i.path.test(url.pathname) && (!i.method || i.method === method),
    );
    if (injection) {
      injection.left -= 1;
      if (injection.actThenFail && url.pathname !== '/token') act(method, url.pathname, query, body);
      return json(
        response,
        injection.status,
        injection.body ?? apiError(injection.status, 'Injected failure'),
        injection.headers,
      );
    }
    if (url.pathname === '/token') return handleToken((body ?? {}) as Record<string, string>, response);
    const bearer = /^Bearer (.+)$/u.exec(request.headers.authorization ?? '')?.[1];
    if (refuseAll || !bearer || !accessTokens.has(bearer))
      return json(response, 401, {
        error: {
          code: 401,
          message: 'Request had invalid authentication credentials.',
          status: 'UNAUTHENTICATED',
        },
      });
    const [status, answer] = act(method, url.pathname, query, body);
    json(response, status, answer);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;

  const fake: FakeGoogle = {
    url: `http://127.0.0.1:${port}/`,
    tokenUrl: `http://127.0.0.1:${port}/token`,
    address,
    requests,
    messages,
    labels,
    events,
    busy: [],
    minHistoryId: 0,
    now: undefined,
    get historyId() {
      return historyId;
    },
    pageSize: 100,
    addEmail,
    sent() {
      return [...messages.values()]
        .filter((m) => m.rawText !== undefined)
        .map((message) => {
          const { headers, body } = parseRfc2822(message.rawText ?? '');
          return { message, header: (name: string) => headers.get(name.toLowerCase()), body };
        });
    },
    inject(injection) {
      injections.push({ ...injection, left: injection.times ?? 1 });
    },
    acceptAccessToken(token) {
      accessTokens.add(token);
    },
    refuseAccessTokens() {
      refuseAll = true;
    },
    revokeRefreshToken(token) {
      revoked.add(token);
    },
    authorizeCode(grant) {
      codes.set(grant.code, grant);
    },
    calls() {
      return requests.filter((r) => r.path !== '/token').map((r) => `${r.method} ${r.path}`);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return fake;
}
