/**
 * A small fake of Discord for tests that run the real discord.js against it: the REST API under
 * `<baseUrl>/api/v10` (pass `restApi` as discord.js's `rest.api`, or `DISCORD_API_URL`) and the
 * gateway on the same port. Login works as on Discord: `GET /gateway/bot`, then HELLO, IDENTIFY,
 * READY and one GUILD_CREATE per guild of the shard. People write messages and use slash commands
 * with {@link FakeDiscord.postMessage} and {@link FakeDiscord.interact}, press a message's buttons
 * with {@link FakeDiscord.press} and fill in a modal with {@link FakeDiscord.submitModal}; everything the bot does
 * over REST is recorded (webhooks created and executed, messages, interaction callbacks), and
 * webhook messages come back through the gateway as on Discord, so the bot sees its own avatars.
 *
 * Discord's form limits are enforced as Discord enforces them (test/support/discordLimits.ts): a
 * message, edit, webhook execution or interaction callback over a limit (2,000 characters of
 * content, 10 embeds, 6,000 characters of embeds, 5 action rows, a 45-character modal title, ...)
 * is refused with 400 and `{"code":50035,"message":"Invalid Form Body","errors":{...}}`, and
 * recorded in {@link FakeDiscord.refusals}.
 *
 * Faults a test can inject: a route answering with a status (429 with `retry_after`, 500, an API
 * error code) via {@link FakeDiscord.failNext}, a route that never answers (or carries the request
 * out and then never answers, as a slow Discord), a channel where the bot
 * lacks Manage Webhooks (50013), a bad token (401 / close 4004), the message content intent not
 * enabled (close 4014), and a webhook deleted behind the bot's back.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type WebSocket, WebSocketServer } from 'ws';
import { callbackProblems, type FormErrors, invalidFormBody, messageProblems } from './discordLimits.js';

/** Discord's epoch (2015-01-01), for snowflakes. */
const DISCORD_EPOCH = 1_420_070_400_000n;
const MESSAGE_CONTENT_INTENT = 1 << 15;
const MANAGE_WEBHOOKS = 1n << 29n;
// View Channel, Send Messages, Send Messages in Threads, Embed Links, Attach Files, Read Message History, Manage Webhooks.
const BOT_PERMISSIONS =
  (1n << 10n) | (1n << 11n) | (1n << 38n) | (1n << 14n) | (1n << 15n) | (1n << 16n) | MANAGE_WEBHOOKS;

/** A person or bot as Discord shows them. */
export interface FakeUser {
  id: string;
  username: string;
  bot?: boolean;
  global_name?: string | null;
}

/** A channel of a fake guild: text (0), forum (15), or a thread (11 public, 12 private). */
export interface FakeChannel {
  id: string;
  name: string;
  type: 0 | 11 | 12 | 15;
  /** A thread's or forum post's parent channel. */
  parent_id?: string;
}

/** A role of a fake guild. */
export interface FakeRole {
  id: string;
  name: string;
}

/** A guild as the fake starts it. */
export interface FakeGuild {
  id: string;
  name: string;
  channels: FakeChannel[];
  roles?: FakeRole[];
}

/** A message as stored and dispatched (Discord's JSON shape, the fields tests look at). */
export interface FakeMessage {
  id: string;
  channel_id: string;
  guild_id?: string;
  author: FakeUser & { discriminator: string; avatar: string | null };
  content: string;
  timestamp: string;
  mentions: (FakeUser & { discriminator: string; avatar: null })[];
  mention_roles: string[];
  mention_everyone: boolean;
  attachments: { id: string; filename: string; size: number; url: string; content_type?: string }[];
  type: number;
  webhook_id?: string;
  application_id?: string;
  message_reference?: { message_id: string; channel_id: string; guild_id?: string | undefined };
  referenced_message?: FakeMessage | null;
  nonce?: string;
  [key: string]: unknown;
}

/** A webhook the bot created. */
export interface FakeWebhook {
  id: string;
  token: string;
  channel_id: string;
  guild_id: string;
  name: string;
  application_id: string | null;
}

/** A webhook execution as the bot sent it. */
export interface WebhookExecution {
  webhookId: string;
  /** The thread it posted into (`thread_id`), if any. */
  threadId?: string;
  username?: string;
  avatarUrl?: string;
  content?: string;
  allowedMentions?: unknown;
  files: { name: string; contentType?: string; size: number }[];
  message: FakeMessage;
}

/** A request the fake received. */
export interface DiscordRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingMessage['headers'];
  body: unknown;
}

/** An answer forced on the next request matching a route. */
export interface InjectedFailure {
  status: number;
  /** Discord's JSON error code (e.g. 10015 Unknown Webhook, 50013 Missing Permissions). */
  code?: number;
  /** For 429: seconds to wait (sent as `retry_after` and the `Retry-After` header). */
  retryAfter?: number;
  global?: boolean;
  /** Never answer (the request hangs until the client gives up). */
  hang?: boolean;
  /**
   * Carry the request out (a webhook message is posted) but never answer, as a slow Discord does
   * when the client gives up waiting; `status` is ignored.
   */
  actThenHang?: boolean;
  /** Carry the request out, then answer with `status` anyway (a 502 from Discord's edge after the post). */
  actThenFail?: boolean;
}

/** A modal the bot opened (callback type 9), as Discord receives it. */
export interface FakeModal {
  custom_id: string;
  title: string;
  /** Labels (type 18) around one text input each (type 4), or legacy action rows. */
  components: {
    type: number;
    label?: string;
    description?: string;
    component?: FakeTextInput;
    components?: FakeTextInput[];
  }[];
}

/** A text input of a modal (type 4; style 1 short, 2 paragraph). */
export interface FakeTextInput {
  type: number;
  custom_id: string;
  style: number;
  label?: string;
  value?: string;
  required?: boolean;
  min_length?: number;
  max_length?: number;
  placeholder?: string;
}

/** An interaction callback or follow-up the bot sent for an interaction. */
export interface InteractionAnswer {
  kind: 'callback' | 'edit' | 'followup';
  /**
   * Callback type: 4 reply, 5 deferred reply, 6 deferred message update, 7 message update,
   * 8 autocomplete result, 9 modal.
   */
  type?: number;
  content?: string;
  embeds?: unknown[];
  components?: unknown[];
  modal?: FakeModal;
  /** Ephemeral (flag 64). */
  ephemeral: boolean;
  choices?: { name: string; value: string }[];
  at: number;
}

/** How a {@link FakeDiscord} starts. */
export interface FakeDiscordOptions {
  token?: string;
  applicationId?: string;
  botUser?: FakeUser;
  guilds: FakeGuild[];
  /** Whether the app may use the message content intent (default true; false closes with 4014). */
  messageContentIntent?: boolean;
  /**
   * Channels where the bot lacks Manage Webhooks from the start: a deny overwrite in GUILD_CREATE
   * (what discord.js computes permissions from) and 50013 from the webhook endpoints.
   */
  noManageWebhooks?: string[];
  /**
   * Every shard gets every guild and its events, as during a reshard when two processes briefly
   * hold the same guild (default false: a guild belongs to shard `(guild_id >> 22) % count`).
   */
  guildsToEveryShard?: boolean;
  /** What `GET /gateway/bot` recommends (default 1 shard, max_concurrency 1). */
  recommendedShards?: number;
  maxConcurrency?: number;
}

interface GatewaySession {
  socket: WebSocket;
  seq: number;
  shard: [number, number];
  identified: boolean;
  intents: number;
}

/** An interaction dispatched to the bot, and what the bot answered. */
export interface FakeInteraction {
  id: string;
  /** The interaction's token (for its callback and webhook routes). */
  token: string;
  answers: InteractionAnswer[];
  answered(count?: number): Promise<InteractionAnswer[]>;
  /** Dispatches the same interaction again (a gateway resume, a second shard). */
  redeliver(): void;
}

/** A running fake Discord. */
export interface FakeDiscord {
  /** For discord.js `rest: { api }` and `DISCORD_API_URL`: `http://127.0.0.1:PORT/api`. */
  readonly restApi: string;
  readonly token: string;
  readonly applicationId: string;
  readonly botUser: FakeUser;
  readonly requests: DiscordRequest[];
  readonly webhooks: Map<string, FakeWebhook>;
  readonly executions: WebhookExecution[];
  /** Messages per channel, oldest first. */
  readonly messages: Map<string, FakeMessage[]>;
  /** Bulk command registrations: `guild:<id>` or `global` to the commands sent. */
  readonly commands: Map<
    string,
    { name: string; options?: unknown[]; default_member_permissions?: string | null }[]
  >;
  /** Channels where creating a webhook fails with 50013 Missing Permissions. */
  readonly noManageWebhooks: Set<string>;
  /** Gateway sessions identified so far (a reconnect adds one). */
  readonly identifies: { shard: [number, number]; intents: number }[];
  /** Posts a message as a person (or another bot) and dispatches MESSAGE_CREATE. */
  postMessage(input: {
    channelId: string;
    author: FakeUser;
    content: string;
    mentions?: FakeUser[];
    mentionRoles?: string[];
    replyTo?: string | undefined;
    /** For a reply: whether the reply pings the replied-to author (Discord's default: true). */
    replyPing?: boolean;
    attachments?: { filename: string; size: number; content_type?: string }[];
    /** Dispatch it to the bot (default true); false stores it only. */
    dispatch?: boolean;
  }): FakeMessage;
  /** Dispatches an arbitrary gateway event to every identified session whose shard has the guild. */
  dispatch(type: string, data: Record<string, unknown>, guildId?: string): void;
  /** A person uses a slash command (or types in its autocomplete when `focused` names an option). */
  interact(input: {
    channelId: string;
    user: FakeUser;
    command: string;
    subcommand?: string;
    options?: Record<string, string>;
    focused?: string;
    roles?: string[];
    /** The member's permissions bitfield (default: none; `8` is Administrator). */
    permissions?: string;
  }): FakeInteraction;
  /**
   * A person presses a button (component interaction, type 3) on a message the bot posted; in a
   * channel of no guild (a DM) the interaction carries `user` instead of `member`.
   */
  press(input: {
    messageId: string;
    customId: string;
    user: FakeUser;
    roles?: string[];
    permissions?: string;
  }): FakeInteraction;
  /** A person submits a modal (type 5) opened from a message's button, with each text input's value. */
  submitModal(input: {
    messageId: string;
    customId: string;
    values: Record<string, string>;
    user: FakeUser;
    roles?: string[];
    permissions?: string;
  }): FakeInteraction;
  /** Message edits the bot made (`PATCH /channels/:id/messages/:id`, or a component's `@original`). */
  readonly edits: { channelId: string; messageId: string; body: Record<string, unknown> }[];
  /** Forms refused with 50035 Invalid Form Body (Discord's limits), each as its nested errors. */
  readonly refusals: FormErrors[];
  /** Forces the next request whose `METHOD path` matches to answer with a failure. */
  failNext(route: RegExp, failure: InjectedFailure, times?: number): void;
  /** Adds a channel (a new thread) without telling the gateway, so the bot has not cached it. */
  addChannel(guildId: string, channel: FakeChannel): void;
  /** Deletes a webhook as a server admin would (the bot is not told). */
  deleteWebhook(id: string): void;
  /** Messages of a channel sent through webhooks, oldest first. */
  webhookMessages(channelId: string): FakeMessage[];
  /** Resolves when `count` webhook executions have been recorded. */
  executed(count: number): Promise<WebhookExecution[]>;
  /** Closes every gateway connection with a code (e.g. 4000 to make the bot resume). */
  closeGateway(code: number): void;
  close(): Promise<void>;
}

/** Starts a fake Discord on a free loopback port. */
export async function startFakeDiscord(options: FakeDiscordOptions): Promise<FakeDiscord> {
  const token = options.token ?? 'fake-bot-token';
  const applicationId = options.applicationId ?? '900000000000000001';
  const botUser: FakeUser = options.botUser ?? { id: applicationId, username: 'Troupe', bot: true };
  const requests: DiscordRequest[] = [];
  const webhooks = new Map<string, FakeWebhook>();
  const executions: WebhookExecution[] = [];
  const messages = new Map<string, FakeMessage[]>();
  const commands = new Map<string, { name: string }[]>();
  const noManageWebhooks = new Set<string>(options.noManageWebhooks ?? []);
  const identifies: { shard: [number, number]; intents: number }[] = [];
  const failures: { route: RegExp; failure: InjectedFailure; left: number }[] = [];
  const interactions = new Map<
    string,
    { answers: InteractionAnswer[]; waiters: (() => void)[]; token: string; messageId?: string }
  >();
  const edits: FakeDiscord['edits'] = [];
  const refusals: FormErrors[] = [];
  // DM channels the bot opened, per recipient.
  const dmChannels = new Map<string, string>();
  const executionWaiters: (() => void)[] = [];
  const sessions = new Set<GatewaySession>();
  const hanging = new Set<ServerResponse>();
  // Requests carried out but never answered (actThenHang), or answered with a failure (actThenFail).
  const muted = new WeakMap<ServerResponse, number | undefined>();
  const channels = new Map<string, FakeChannel & { guild_id: string }>();
  for (const guild of options.guilds)
    for (const channel of guild.channels) channels.set(channel.id, { ...channel, guild_id: guild.id });

  let counter = 0n;
  const snowflake = () => {
    counter += 1n;
    return (((BigInt(Date.now()) - DISCORD_EPOCH) << 22n) | (counter & 0x3fffffn)).toString();
  };
  const userJson = (u: FakeUser) => ({
    id: u.id,
    username: u.username,
    discriminator: '0',
    global_name: u.global_name ?? null,
    avatar: null,
    ...(u.bot ? { bot: true } : {}),
  });

  const server = createServer((req, res) => {
    void handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) json(res, 500, { message: String(error), code: 0 });
    });
  });
  const wss = new WebSocketServer({ server, path: '/gateway' });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const restApi = `http://127.0.0.1:${port}/api`;

  function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
    if (muted.has(res)) {
      const failed = muted.get(res);
      muted.delete(res);
      if (failed === undefined) hanging.add(res);
      else json(res, failed, { message: `Injected failure ${failed} after acting`, code: 0 });
      return;
    }
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  }
  /** Answers 400 / 50035 Invalid Form Body when Discord would refuse the form; true if it did. */
  function refuse(res: ServerResponse, errors: FormErrors | undefined): boolean {
    if (!errors) return false;
    refusals.push(errors);
    json(res, 400, invalidFormBody(errors));
    return true;
  }
  function noContent(res: ServerResponse) {
    if (muted.has(res)) {
      json(res, 204, undefined);
      return;
    }
    // Discord's 204 has no JSON content type (discord.js would try to parse an empty body).
    res.writeHead(204);
    res.end();
  }

  async function readBody(
    req: IncomingMessage,
  ): Promise<{ body: unknown; files: WebhookExecution['files'] }> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks);
    const type = req.headers['content-type'] ?? '';
    if (type.startsWith('multipart/form-data')) {
      const boundary = /boundary=(?:"([^"]+)"|([^;]+))/u.exec(type);
      const mark = `--${boundary?.[1] ?? boundary?.[2] ?? ''}`;
      let body: unknown = {};
      const files: WebhookExecution['files'] = [];
      for (const part of raw.toString('latin1').split(mark)) {
        const split = part.indexOf('\r\n\r\n');
        if (split < 0) continue;
        const head = part.slice(0, split);
        const content = part.slice(split + 4).replace(/\r\n$/u, '');
        const name = /name="([^"]+)"/u.exec(head)?.[1];
        const filename = /filename="([^"]*)"/u.exec(head)?.[1];
        if (name === 'payload_json') body = JSON.parse(Buffer.from(content, 'latin1').toString('utf8'));
        else if (filename !== undefined)
          files.push({
            name: filename,
            size: Buffer.byteLength(content, 'latin1'),
            ...(/content-type: ([^\r\n]+)/iu.exec(head)?.[1]
              ? { contentType: /content-type: ([^\r\n]+)/iu.exec(head)?.[1] as string }
              : {}),
          });
      }
      return { body, files };
    }
    const text = raw.toString('utf8');
    if (text === '') return { body: undefined, files: [] };
    try {
      return { body: JSON.parse(text), files: [] };
    } catch {
      return { body: text, files: [] };
    }
  }

  function store(message: FakeMessage): void {
    const list = messages.get(message.channel_id) ?? [];
    list.push(message);
    messages.set(message.channel_id, list);
  }
  function findMessage(id: string): FakeMessage | undefined {
    for (const list of messages.values()) {
      const hit = list.find((m) => m.id === id);
      if (hit) return hit;
    }
    return undefined;
  }

  function dispatch(type: string, data: Record<string, unknown>, guildId?: string): void {
    for (const session of sessions) {
      if (!session.identified) continue;
      if (guildId !== undefined && !options.guildsToEveryShard) {
        const [shard, count] = session.shard;
        if (Number((BigInt(guildId) >> 22n) % BigInt(count)) !== shard) continue;
      }
      session.seq += 1;
      session.socket.send(JSON.stringify({ op: 0, t: type, s: session.seq, d: data }));
    }
  }

  function guildPayload(guild: FakeGuild) {
    // The bot's permissions come from @everyone: what Troupe's invite asks for.
    const everyone = { id: guild.id, name: '@everyone', permissions: String(BOT_PERMISSIONS) };
    const roles = [everyone, ...(guild.roles ?? []).map((r) => ({ ...r, permissions: '0' }))].map((r, i) => ({
      ...r,
      position: i,
      color: 0,
      hoist: false,
      managed: false,
      mentionable: true,
      flags: 0,
    }));
    const plain = guild.channels.filter((c) => c.type === 0 || c.type === 15);
    const threads = guild.channels.filter((c) => c.type === 11 || c.type === 12);
    const channelJson = (c: FakeChannel, i: number) => ({
      id: c.id,
      type: c.type,
      name: c.name,
      position: i,
      guild_id: guild.id,
      permission_overwrites: noManageWebhooks.has(c.id)
        ? [{ id: guild.id, type: 0, allow: '0', deny: String(MANAGE_WEBHOOKS) }]
        : [],
      ...(c.parent_id ? { parent_id: c.parent_id } : {}),
      ...(c.type === 11 || c.type === 12
        ? { thread_metadata: { archived: false, auto_archive_duration: 1440, locked: false }, owner_id: '1' }
        : {}),
    });
    return {
      id: guild.id,
      name: guild.name,
      icon: null,
      owner_id: '1',
      unavailable: false,
      large: false,
      member_count: 2,
      joined_at: new Date(0).toISOString(),
      features: [],
      emojis: [],
      stickers: [],
      roles,
      channels: plain.map(channelJson),
      threads: threads.map(channelJson),
      members: [
        {
          user: userJson(botUser),
          roles: [],
          joined_at: new Date(0).toISOString(),
          deaf: false,
          mute: false,
          flags: 0,
        },
      ],
      presences: [],
      voice_states: [],
      stage_instances: [],
      guild_scheduled_events: [],
      premium_tier: 0,
      system_channel_flags: 0,
      verification_level: 0,
      default_message_notifications: 0,
      explicit_content_filter: 0,
      mfa_level: 0,
      nsfw_level: 0,
      preferred_locale: 'en-US',
    };
  }

  wss.on('connection', (socket) => {
    const session: GatewaySession = { socket, seq: 0, shard: [0, 1], identified: false, intents: 0 };
    sessions.add(session);
    socket.on('close', () => sessions.delete(session));
    socket.on('message', (data) => {
      const payload = JSON.parse(String(data)) as { op: number; d: Record<string, unknown> };
      if (payload.op === 1) {
        socket.send(JSON.stringify({ op: 11 }));
        return;
      }
      if (payload.op === 2 || payload.op === 6) {
        if (payload.d.token !== token && payload.d.token !== `Bot ${token}`) {
          socket.close(4004, 'Authentication failed.');
          return;
        }
        if (payload.op === 6) {
          // A resume is refused (op 9, not resumable): the client identifies again.
          socket.send(JSON.stringify({ op: 9, d: false }));
          return;
        }
        const intents = Number(payload.d.intents ?? 0);
        if ((intents & MESSAGE_CONTENT_INTENT) !== 0 && options.messageContentIntent === false) {
          socket.close(4014, 'Disallowed intent(s).');
          return;
        }
        const shard = (payload.d.shard as [number, number] | undefined) ?? [0, 1];
        session.shard = shard;
        session.intents = intents;
        session.identified = true;
        identifies.push({ shard, intents });
        const guilds = options.guilds.filter(
          (g) => options.guildsToEveryShard || Number((BigInt(g.id) >> 22n) % BigInt(shard[1])) === shard[0],
        );
        session.seq += 1;
        socket.send(
          JSON.stringify({
            op: 0,
            t: 'READY',
            s: session.seq,
            d: {
              v: 10,
              user: { ...userJson(botUser), bot: true, verified: true, flags: 0 },
              guilds: guilds.map((g) => ({ id: g.id, unavailable: true })),
              session_id: randomBytes(8).toString('hex'),
              resume_gateway_url: `ws://127.0.0.1:${port}/gateway`,
              application: { id: applicationId, flags: 0 },
              shard,
              private_channels: [],
              relationships: [],
              user_settings: {},
              guild_join_requests: [],
              presences: [],
            },
          }),
        );
        for (const guild of guilds) {
          session.seq += 1;
          socket.send(JSON.stringify({ op: 0, t: 'GUILD_CREATE', s: session.seq, d: guildPayload(guild) }));
        }
      }
    });
    socket.send(JSON.stringify({ op: 10, d: { heartbeat_interval: 41_250 } }));
  });

  function createMessage(input: {
    channelId: string;
    author: FakeMessage['author'];
    content: string;
    extra?: Partial<FakeMessage>;
  }): FakeMessage {
    const channel = channels.get(input.channelId);
    const message: FakeMessage = {
      id: snowflake(),
      channel_id: input.channelId,
      // Discord says what kind of channel it is; an unknown one is a DM here.
      channel_type: channel?.type ?? 1,
      ...(channel ? { guild_id: channel.guild_id } : {}),
      author: input.author,
      content: input.content,
      timestamp: new Date().toISOString(),
      edited_timestamp: null,
      tts: false,
      mentions: [],
      mention_roles: [],
      mention_everyone: false,
      attachments: [],
      embeds: [],
      pinned: false,
      type: 0,
      ...input.extra,
    };
    store(message);
    return message;
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', `http://127.0.0.1:${port}`);
    const path = url.pathname.replace(/^\/api\/v\d+/u, '');
    const { body, files } = await readBody(req);
    requests.push({ method: req.method ?? 'GET', path, query: url.searchParams, headers: req.headers, body });
    const route = `${req.method} ${path}`;
    const injected = failures.find((f) => f.left > 0 && f.route.test(route));
    if (injected?.failure.actThenHang || injected?.failure.actThenFail) {
      injected.left -= 1;
      muted.set(res, injected.failure.actThenFail ? injected.failure.status : undefined);
    } else if (injected) {
      injected.left -= 1;
      const f = injected.failure;
      if (f.hang) {
        hanging.add(res);
        return;
      }
      if (f.status === 429) {
        const retryAfter = f.retryAfter ?? 0.05;
        json(
          res,
          429,
          { message: 'You are being rate limited.', retry_after: retryAfter, global: f.global ?? false },
          {
            'retry-after': String(Math.ceil(retryAfter)),
            'x-ratelimit-scope': f.global ? 'global' : 'user',
            ...(f.global ? { 'x-ratelimit-global': 'true' } : {}),
          },
        );
        return;
      }
      json(res, f.status, { message: `Injected failure ${f.status}`, code: f.code ?? 0 });
      return;
    }

    const webhookToken = /^\/webhooks\/(\d+)\/([^/]+)/u.exec(path);
    const auth = req.headers.authorization;
    if (!webhookToken && !path.startsWith('/interactions/') && auth !== `Bot ${token}`) {
      json(res, 401, { message: '401: Unauthorized', code: 0 });
      return;
    }

    if (route === 'GET /gateway/bot') {
      json(res, 200, {
        url: `ws://127.0.0.1:${port}/gateway`,
        shards: options.recommendedShards ?? 1,
        session_start_limit: {
          total: 1000,
          remaining: 999,
          reset_after: 0,
          max_concurrency: options.maxConcurrency ?? 1,
        },
      });
      return;
    }
    let m = /^PUT \/applications\/(\d+)(?:\/guilds\/(\d+))?\/commands$/u.exec(route);
    if (m) {
      const list = (body as { name: string }[]).map((c, i) => ({
        ...c,
        id: `${m?.[2] ?? 0}${i + 1}`,
        version: '1',
      }));
      commands.set(m[2] ? `guild:${m[2]}` : 'global', list);
      json(res, 200, list);
      return;
    }
    m = /^GET \/channels\/(\d+)\/webhooks$/u.exec(route);
    if (m) {
      const channelId = m[1] as string;
      if (noManageWebhooks.has(channelId)) {
        json(res, 403, { message: 'Missing Permissions', code: 50013 });
        return;
      }
      json(res, 200, [...webhooks.values()].filter((w) => w.channel_id === channelId).map(webhookJson));
      return;
    }
    m = /^POST \/channels\/(\d+)\/webhooks$/u.exec(route);
    if (m) {
      const channelId = m[1] as string;
      const channel = channels.get(channelId);
      if (!channel) {
        json(res, 404, { message: 'Unknown Channel', code: 10003 });
        return;
      }
      if (noManageWebhooks.has(channelId)) {
        json(res, 403, { message: 'Missing Permissions', code: 50013 });
        return;
      }
      if (channel.type === 11 || channel.type === 12) {
        json(res, 400, { message: 'Cannot execute action on this channel type', code: 50024 });
        return;
      }
      const name = String((body as { name?: unknown }).name ?? '');
      if (name.length < 1 || name.length > 80 || /clyde|discord/iu.test(name)) {
        json(res, 400, { message: 'Invalid Form Body', code: 50035 });
        return;
      }
      const count = [...webhooks.values()].filter((w) => w.channel_id === channelId).length;
      if (count >= 15) {
        json(res, 400, { message: 'Maximum number of webhooks reached (15)', code: 30007 });
        return;
      }
      const webhook: FakeWebhook = {
        id: snowflake(),
        token: randomBytes(51).toString('base64url').slice(0, 68),
        channel_id: channelId,
        guild_id: channel.guild_id,
        name,
        application_id: applicationId,
      };
      webhooks.set(webhook.id, webhook);
      json(res, 200, webhookJson(webhook));
      return;
    }
    if (
      webhookToken &&
      webhookToken[1] !== applicationId &&
      req.method === 'POST' &&
      path === `/webhooks/${webhookToken[1]}/${webhookToken[2]}`
    ) {
      const webhook = webhooks.get(webhookToken[1] as string);
      if (!webhook || webhook.token !== webhookToken[2]) {
        json(res, 404, { message: 'Unknown Webhook', code: 10015 });
        return;
      }
      const payload = (body ?? {}) as {
        content?: string;
        username?: string;
        avatar_url?: string;
        allowed_mentions?: unknown;
      };
      const threadId = url.searchParams.get('thread_id') ?? undefined;
      if (threadId !== undefined && channels.get(threadId)?.parent_id !== webhook.channel_id) {
        json(res, 400, { message: 'Unknown thread', code: 10003 });
        return;
      }
      if (refuse(res, messageProblems(payload))) return;
      const username = payload.username ?? webhook.name;
      if (/clyde|discord/iu.test(username)) {
        refuse(res, {
          username: {
            _errors: [{ code: 'USERNAME_INVALID_CONTAINS', message: 'Username cannot contain "discord"' }],
          },
        });
        return;
      }
      const message = createMessage({
        channelId: threadId ?? webhook.channel_id,
        author: { id: webhook.id, username, discriminator: '0000', avatar: null, bot: true },
        content: payload.content ?? '',
        extra: {
          webhook_id: webhook.id,
          ...(webhook.application_id ? { application_id: webhook.application_id } : {}),
          attachments: files.map((f) => ({
            id: snowflake(),
            filename: f.name,
            size: f.size,
            url: `https://cdn.example/${f.name}`,
            ...(f.contentType ? { content_type: f.contentType } : {}),
          })),
        },
      });
      executions.push({
        webhookId: webhook.id,
        ...(threadId ? { threadId } : {}),
        ...(payload.username !== undefined ? { username: payload.username } : {}),
        ...(payload.avatar_url !== undefined ? { avatarUrl: payload.avatar_url } : {}),
        ...(payload.content !== undefined ? { content: payload.content } : {}),
        allowedMentions: payload.allowed_mentions,
        files,
        message,
      });
      for (const wake of executionWaiters.splice(0)) wake();
      dispatch('MESSAGE_CREATE', message, message.guild_id);
      if (url.searchParams.get('wait') === 'true') json(res, 200, message);
      else noContent(res);
      return;
    }
    m = /^GET \/channels\/(\d+)\/messages\/(\d+)$/u.exec(route);
    if (m) {
      const message = (messages.get(m[1] as string) ?? []).find((x) => x.id === m?.[2]);
      if (!message) json(res, 404, { message: 'Unknown Message', code: 10008 });
      else json(res, 200, message);
      return;
    }
    m = /^GET \/channels\/(\d+)\/messages$/u.exec(route);
    if (m) {
      const list = messages.get(m[1] as string) ?? [];
      const after = url.searchParams.get('after');
      const limit = Number(url.searchParams.get('limit') ?? 50);
      const picked = list.filter((x) => after === null || BigInt(x.id) > BigInt(after));
      json(res, 200, picked.slice(-limit).reverse());
      return;
    }
    m = /^POST \/channels\/(\d+)\/messages$/u.exec(route);
    if (m) {
      const payload = (body ?? {}) as {
        content?: string;
        nonce?: string;
        enforce_nonce?: boolean;
        message_reference?: { message_id?: string };
        embeds?: unknown[];
        components?: unknown[];
      };
      const channelId = m[1] as string;
      const referenced = payload.message_reference?.message_id;
      if (referenced !== undefined && !/^\d{1,20}$/u.test(referenced)) {
        json(res, 400, {
          message: 'Invalid Form Body: message_reference.message_id is not a snowflake',
          code: 50035,
        });
        return;
      }
      if (refuse(res, messageProblems(payload))) return;
      if (payload.enforce_nonce && payload.nonce) {
        const earlier = (messages.get(channelId) ?? []).find(
          (x) => x.nonce === payload.nonce && x.author.id === botUser.id,
        );
        if (earlier) {
          json(res, 200, earlier);
          return;
        }
      }
      const message = createMessage({
        channelId,
        author: { ...userJson(botUser), discriminator: '0', avatar: null },
        content: payload.content ?? '',
        extra: {
          ...(payload.nonce ? { nonce: payload.nonce } : {}),
          ...(payload.embeds ? { embeds: payload.embeds } : {}),
          ...(payload.components ? { components: payload.components } : {}),
        },
      });
      dispatch('MESSAGE_CREATE', message, message.guild_id);
      json(res, 200, message);
      return;
    }
    m = /^PATCH \/channels\/(\d+)\/messages\/(\d+)$/u.exec(route);
    if (m) {
      if (refuse(res, messageProblems(body))) return;
      const message = editMessage(m[1] as string, m[2] as string, (body ?? {}) as Record<string, unknown>);
      if (!message) json(res, 404, { message: 'Unknown Message', code: 10008 });
      else json(res, 200, message);
      return;
    }
    if (route === 'POST /users/@me/channels') {
      const recipient = String((body as { recipient_id?: unknown }).recipient_id ?? '');
      const id = dmChannels.get(recipient) ?? snowflake();
      dmChannels.set(recipient, id);
      json(res, 200, {
        id,
        type: 1,
        last_message_id: null,
        recipients: [{ id: recipient, username: 'dm-user', discriminator: '0', avatar: null }],
      });
      return;
    }
    m = /^GET \/channels\/(\d+)$/u.exec(route);
    if (m) {
      const channel = channels.get(m[1] as string);
      if (!channel) json(res, 404, { message: 'Unknown Channel', code: 10003 });
      else json(res, 200, { ...channel, permission_overwrites: [] });
      return;
    }
    m = /^POST \/interactions\/(\d+)\/([^/]+)\/callback$/u.exec(route);
    if (m) {
      const record = interactions.get(m[1] as string);
      if (!record) {
        json(res, 404, { message: 'Unknown interaction', code: 10062 });
        return;
      }
      const payload = body as {
        type: number;
        data?: {
          content?: string;
          flags?: number;
          choices?: [];
          embeds?: unknown[];
          components?: unknown[];
          custom_id?: string;
          title?: string;
        };
      };
      if (record.answers.some((a) => a.kind === 'callback')) {
        json(res, 400, { message: 'Interaction has already been acknowledged.', code: 40060 });
        return;
      }
      if (refuse(res, callbackProblems(payload))) return;
      answer(record, {
        kind: 'callback',
        type: payload.type,
        ...(payload.data?.content !== undefined ? { content: payload.data.content } : {}),
        ephemeral: ((payload.data?.flags ?? 0) & 64) !== 0,
        ...(payload.data?.choices ? { choices: payload.data.choices } : {}),
        ...(payload.type !== 9 && payload.data?.embeds ? { embeds: payload.data.embeds } : {}),
        ...(payload.type !== 9 && payload.data?.components ? { components: payload.data.components } : {}),
        ...(payload.type === 9 ? { modal: payload.data as unknown as FakeModal } : {}),
        at: Date.now(),
      });
      // 7: the message the pressed component is on is updated.
      if (payload.type === 7 && record.messageId && payload.data)
        editMessage(
          messageChannel(record.messageId),
          record.messageId,
          payload.data as Record<string, unknown>,
        );
      noContent(res);
      return;
    }
    m = /^(PATCH|POST) \/webhooks\/(\d+)\/([^/]+)(\/messages\/(?:@|%40)original)?$/u.exec(route);
    if (m && m[2] === applicationId) {
      const record = [...interactions.values()].find((r) => r.token === m?.[3]);
      if (!record) {
        json(res, 404, { message: 'Unknown Webhook', code: 10015 });
        return;
      }
      const payload = (body ?? {}) as {
        content?: string;
        flags?: number;
        embeds?: unknown[];
        components?: unknown[];
      };
      if (refuse(res, messageProblems(payload))) return;
      // After a deferred update, `@original` is the message the pressed component is on.
      if (m[1] === 'PATCH' && record.messageId) {
        const edited = editMessage(messageChannel(record.messageId), record.messageId, payload);
        answer(record, {
          kind: 'edit',
          ...(payload.content !== undefined ? { content: payload.content } : {}),
          ...(payload.embeds ? { embeds: payload.embeds } : {}),
          ...(payload.components ? { components: payload.components } : {}),
          ephemeral: false,
          at: Date.now(),
        });
        json(res, 200, edited);
        return;
      }
      const deferredEphemeral = record.answers.find((a) => a.kind === 'callback')?.ephemeral ?? false;
      answer(record, {
        kind: m[1] === 'PATCH' ? 'edit' : 'followup',
        ...(payload.content !== undefined ? { content: payload.content } : {}),
        ephemeral: m[1] === 'PATCH' ? deferredEphemeral : ((payload.flags ?? 0) & 64) !== 0,
        at: Date.now(),
      });
      const message = createMessage({
        channelId: '0',
        author: { ...userJson(botUser), discriminator: '0', avatar: null },
        content: payload.content ?? '',
        extra: { webhook_id: applicationId, application_id: applicationId },
      });
      json(res, 200, message);
      return;
    }
    json(res, 404, { message: `404: Not Found (${route})`, code: 0 });
  }

  function webhookJson(w: FakeWebhook) {
    return {
      id: w.id,
      type: 1,
      channel_id: w.channel_id,
      guild_id: w.guild_id,
      name: w.name,
      avatar: null,
      token: w.token,
      application_id: w.application_id,
      user: userJson(botUser),
    };
  }

  /**
   * Dispatches an interaction as Discord does: in a guild channel with the member (roles,
   * permissions), elsewhere (a DM) with the user; a component or modal interaction carries the
   * message it came from.
   */
  function sendInteraction(
    type: number,
    data: Record<string, unknown>,
    channelId: string,
    who: { user: FakeUser; roles?: string[]; permissions?: string },
    message?: FakeMessage,
  ): FakeInteraction {
    const id = snowflake();
    const interactionToken = `itok-${randomBytes(24).toString('hex')}`;
    const record = {
      answers: [] as InteractionAnswer[],
      waiters: [] as (() => void)[],
      token: interactionToken,
      ...(message ? { messageId: message.id } : {}),
    };
    interactions.set(id, record);
    const channel = channels.get(channelId);
    const payload = {
      id,
      application_id: applicationId,
      type,
      data,
      ...(channel ? { guild_id: channel.guild_id } : {}),
      channel_id: channelId,
      channel: channel
        ? { id: channel.id, type: channel.type, name: channel.name, guild_id: channel.guild_id }
        : { id: channelId, type: 1 },
      ...(channel
        ? {
            member: {
              user: userJson(who.user),
              roles: who.roles ?? [],
              permissions: who.permissions ?? '0',
              joined_at: new Date(0).toISOString(),
              deaf: false,
              mute: false,
              flags: 0,
            },
          }
        : { user: userJson(who.user) }),
      ...(message ? { message } : {}),
      token: interactionToken,
      version: 1,
      app_permissions: '0',
      locale: 'en-US',
      ...(channel ? { guild_locale: 'en-US' } : {}),
      entitlements: [],
      authorizing_integration_owners: {},
      context: channel ? 0 : 1,
    };
    const deliver = () => dispatch('INTERACTION_CREATE', payload, channel?.guild_id);
    deliver();
    return {
      id,
      token: interactionToken,
      answers: record.answers,
      answered(count = 1) {
        if (record.answers.length >= count) return Promise.resolve(record.answers);
        return new Promise((resolve) => {
          const check = () => {
            if (record.answers.length >= count) resolve(record.answers);
            else record.waiters.push(check);
          };
          record.waiters.push(check);
        });
      },
      redeliver: deliver,
    };
  }

  function messageChannel(messageId: string): string {
    return findMessage(messageId)?.channel_id ?? '0';
  }
  function editMessage(channelId: string, messageId: string, body: Record<string, unknown>) {
    const message = (messages.get(channelId) ?? []).find((x) => x.id === messageId);
    if (!message) return undefined;
    edits.push({ channelId, messageId, body });
    for (const field of ['content', 'embeds', 'components'] as const)
      if (body[field] !== undefined) message[field] = body[field] as never;
    message.edited_timestamp = new Date().toISOString();
    return message;
  }

  function answer(record: { answers: InteractionAnswer[]; waiters: (() => void)[] }, a: InteractionAnswer) {
    record.answers.push(a);
    for (const wake of record.waiters.splice(0)) wake();
  }

  return {
    restApi,
    token,
    applicationId,
    botUser,
    requests,
    webhooks,
    executions,
    messages,
    commands,
    noManageWebhooks,
    identifies,
    dispatch,
    postMessage(input) {
      const author = { ...userJson(input.author), discriminator: '0', avatar: null };
      const referenced = input.replyTo ? findMessage(input.replyTo) : undefined;
      const mentions = [...(input.mentions ?? [])];
      if (referenced && input.replyPing !== false && !referenced.webhook_id)
        mentions.push({ id: referenced.author.id, username: referenced.author.username });
      const message = createMessage({
        channelId: input.channelId,
        author,
        content: input.content,
        extra: {
          mentions: mentions.map((u) => ({ ...userJson(u), avatar: null })),
          mention_roles: input.mentionRoles ?? [],
          mention_everyone: /@everyone|@here/u.test(input.content),
          attachments: (input.attachments ?? []).map((a) => ({
            id: snowflake(),
            url: `https://cdn.example/${a.filename}`,
            ...a,
          })),
          ...(input.replyTo
            ? {
                type: 19,
                message_reference: {
                  message_id: input.replyTo,
                  channel_id: input.channelId,
                  ...(channels.get(input.channelId)
                    ? { guild_id: channels.get(input.channelId)?.guild_id }
                    : {}),
                },
                referenced_message: referenced ?? null,
              }
            : {}),
        },
      });
      if (input.dispatch !== false) dispatch('MESSAGE_CREATE', message, message.guild_id);
      return message;
    },
    interact(input) {
      const channel = channels.get(input.channelId);
      const typed = (name: string, value: string) => ({
        name,
        type: 3,
        value,
        ...(input.focused === name ? { focused: true } : {}),
      });
      const options = Object.entries(input.options ?? {}).map(([k, v]) => typed(k, v));
      const data = {
        id: `${channel?.guild_id ?? 0}1`,
        name: input.command,
        type: 1,
        options: input.subcommand ? [{ name: input.subcommand, type: 1, options }] : options,
      };
      return sendInteraction(input.focused ? 4 : 2, data, input.channelId, input);
    },
    press(input) {
      const message = findMessage(input.messageId);
      if (!message) throw new Error(`no message ${input.messageId}`);
      return sendInteraction(
        3,
        { custom_id: input.customId, component_type: 2 },
        message.channel_id,
        input,
        message,
      );
    },
    submitModal(input) {
      const message = findMessage(input.messageId);
      if (!message) throw new Error(`no message ${input.messageId}`);
      const components = Object.entries(input.values).map(([customId, value], i) => ({
        type: 18,
        id: i + 1,
        component: { type: 4, id: i + 100, custom_id: customId, value },
      }));
      return sendInteraction(
        5,
        { custom_id: input.customId, components },
        message.channel_id,
        input,
        message,
      );
    },
    edits,
    refusals,
    failNext(route, failure, times = 1) {
      failures.push({ route, failure, left: times });
    },
    addChannel(guildId, channel) {
      channels.set(channel.id, { ...channel, guild_id: guildId });
    },
    deleteWebhook(id) {
      webhooks.delete(id);
    },
    webhookMessages(channelId) {
      return (messages.get(channelId) ?? []).filter(
        (m) => m.webhook_id !== undefined && m.webhook_id !== applicationId,
      );
    },
    executed(count) {
      if (executions.length >= count) return Promise.resolve(executions);
      return new Promise((resolve) => {
        const check = () => {
          if (executions.length >= count) resolve(executions);
          else executionWaiters.push(check);
        };
        executionWaiters.push(check);
      });
    },
    closeGateway(code) {
      for (const session of sessions) session.socket.close(code, 'closed by the test');
    },
    async close() {
      for (const res of hanging) res.destroy();
      for (const session of sessions) session.socket.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
