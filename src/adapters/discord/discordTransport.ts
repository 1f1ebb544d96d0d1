import { createHash } from 'node:crypto';
import {
  ChannelType,
  type Client,
  DiscordAPIError,
  Events,
  makeURLSearchParams,
  RateLimitError,
  type RawFile,
  REST,
  Routes,
  SnowflakeUtil,
} from 'discord.js';
import { type Logger, silentLogger } from '../../logging/logger.js';
import {
  type Transport,
  TransportError,
  type TransportLimits,
  type TransportMessage,
  type TransportReceipt,
} from '../../ports/transport.js';
import { ChannelRecentMap } from './channelRecentMap.js';
import { DiscordMessageMemory } from './discordMessageMemory.js';
import {
  DiscordApiCode,
  isMissingPermission,
  isUnknownWebhook,
  toTransportError,
} from './discordSendError.js';
import { DiscordWebhooks, type WebhookRef } from './discordWebhooks.js';
import { discordMessageIdOf } from './editEventId.js';
import { RecentMap } from './recentMap.js';
import { QUOTE_RESERVE, type QuoteTarget, replyQuote, sameQuotedAnswer } from './replyQuote.js';
import { webhookUsername } from './webhookUsername.js';

/** Discord's longest message. */
export const DISCORD_MAX_MESSAGE = 2000;
/** How far before a resent part's first attempt the bot looks for it in the channel. */
const RECONCILE_SLACK_MS = 60_000;
/** Part keys remembered as delivered or tried, in all. */
const KEYS_REMEMBERED = 10_000;
/**
 * Delivered part keys remembered per channel: routing sends one channel's parts one at a time, and
 * asks again only for the part it last tried (a send it gave up on that went out after all).
 */
const DELIVERED_PER_CHANNEL = 16;
/** How much longer than a send discord.js waits for one request, so routing's abort comes first. */
const REST_TIMEOUT_MARGIN_MS = 5_000;

/** Something that stops the bot from speaking in a channel, reported once and shown by `/avatars`. */
export interface ChannelProblem {
  channelId: string;
  code: string;
  message: string;
  /** Epoch ms of the first time it was seen (since the last success there). */
  since: number;
}

/** How a {@link DiscordTransport} is made. */
export interface DiscordTransportOptions {
  /** The discord.js client (its REST client sends; its cache resolves channels). */
  client: Client;
  /** Shared with the inbound side; one is made when not given. */
  memory?: DiscordMessageMemory;
  /** The name the channel webhooks are created with. Default `Troupe`. */
  webhookName?: string;
  logger?: Logger;
  /** Called once per channel and problem (a missing permission, too many webhooks). */
  onProblem?: (problem: ChannelProblem) => void;
  /** How long one send may take, 429 waits included (default 60 s). */
  sendTimeoutMs?: number;
}

type Target =
  | { kind: 'webhook'; webhookChannelId: string; threadId?: string; guildId: string; name?: string }
  | { kind: 'direct'; channelId: string };

/** The message an answer quotes, and whether its author is pinged. */
interface Quoted {
  quote: QuoteTarget;
  ping: boolean;
}

/** A message's content as posted, and the users it may ping. */
interface Rendered {
  content: string;
  allowedUsers: string[];
}

interface PostedMessage {
  id: string;
  channel_id: string;
  content: string;
  webhook_id?: string;
  application_id?: string;
  author: { id: string; username: string };
}

/**
 * The transport of channel kind `discord`. In a server, avatars speak through the channel's one
 * webhook with their own name and picture per message; threads and forum posts go through their
 * parent channel's webhook with `thread_id`. In a DM (no webhooks there) the bot speaks itself, the
 * avatar's name in bold, with Discord's `nonce` + `enforce_nonce` so a resend cannot double-post.
 *
 * - Webhooks cannot reply natively: an answer starts with a quote line (who, the start of their
 *   message, a jump link) and pings that person only when their own message was a reply that
 *   pinged. Every message goes with `allowed_mentions` that allow nothing else: no @everyone,
 *   @here, roles or users, whatever the model or a tool wrote.
 * - Text is split by routing at {@link DISCORD_MAX_MESSAGE} less room for the quote line, on
 *   paragraph, line or sentence boundaries; voice replies go as audio attachments.
 * - Rate limits: discord.js's REST queue waits out 429s (`retry_after`, buckets, global limits), so
 *   a 429 delays a part; a wait longer than a send may take fails the send at once as
 *   `TROUPE_TRANSPORT_RATE_LIMITED` with Discord's wait, and routing retries after it. Routing
 *   keeps one channel's parts in order.
 * - Nothing twice: a part this process already delivered is not sent again; a part that may have
 *   gone out (an earlier attempt timed out, or an earlier run crashed before settling it) is first
 *   looked for among the channel's recent messages from the bot's webhook with the same name and
 *   text (for a reply: the same message linked and the same text after the quote line, which is
 *   rebuilt after a restart), and not sent again if found.
 * - A webhook deleted behind the bot's back is recreated once and the part sent again; a missing
 *   permission is a `TROUPE_TRANSPORT_FORBIDDEN` failure naming it, reported once per channel.
 */
export class DiscordTransport implements Transport {
  readonly kind = 'discord';
  readonly limits: TransportLimits;
  readonly webhooks: DiscordWebhooks;
  readonly memory: DiscordMessageMemory;
  private readonly client: Client;
  private readonly log: Logger;
  private readonly webhookRest: REST;
  private readonly delivered = new ChannelRecentMap<string>(DELIVERED_PER_CHANNEL, KEYS_REMEMBERED);
  private readonly attempted = new RecentMap<string, number>(KEYS_REMEMBERED);
  private readonly problemsByChannel = new Map<string, ChannelProblem>();
  private readonly onProblem: ((problem: ChannelProblem) => void) | undefined;
  /** Parts looked for after a possible earlier send, and found (so not sent again). */
  reconciled = 0;

  constructor(options: DiscordTransportOptions) {
    this.client = options.client;
    this.log = options.logger ?? silentLogger();
    this.memory = options.memory ?? new DiscordMessageMemory();
    this.onProblem = options.onProblem;
    this.limits = {
      maxTextLength: DISCORD_MAX_MESSAGE - QUOTE_RESERVE,
      voice: true,
      attachments: true,
      sendTimeoutMs: options.sendTimeoutMs ?? 60_000,
    };
    const sendTimeoutMs = this.limits.sendTimeoutMs ?? 60_000;
    this.rejectLongRateLimits(sendTimeoutMs);
    this.webhookRest = this.webhookClient(sendTimeoutMs);
    this.webhooks = new DiscordWebhooks({
      rest: this.client.rest,
      applicationId: () => this.client.application?.id ?? undefined,
      ...(options.webhookName !== undefined ? { name: options.webhookName } : {}),
      logger: this.log,
    });
  }

  /**
   * discord.js waits out a 429 before it answers, and that wait cannot be aborted: a send told to
   * wait longer than a send may take would time out, and so would every retry queued behind it,
   * until the answer is dropped. Such a wait on a send's request fails the send at once instead,
   * as `TROUPE_TRANSPORT_RATE_LIMITED` with Discord's wait, which routing sleeps before retrying.
   * A filter the client was made with is kept.
   */
  private rejectLongRateLimits(sendTimeoutMs: number): void {
    const options = this.client.rest.options;
    if (options.rejectOnRateLimit !== null && options.rejectOnRateLimit !== undefined) return;
    options.rejectOnRateLimit = (data) =>
      data.retryAfter >= sendTimeoutMs && SEND_ROUTE.test(new URL(data.url).pathname);
  }

  /**
   * The REST client webhook messages are posted with (they need no bot token). discord.js sends a
   * request again by itself, blindly, after a 5xx or its own timeout (15 s by default), yet
   * Discord may have posted the message (a slow answer, a 502 from its edge): it would appear
   * twice. This one never retries, and waits longer than a send may take, so routing gives up
   * first (an aborted request is never sent again) and looks for the part before resending.
   */
  private webhookClient(sendTimeoutMs: number): REST {
    const { api, version, globalRequestsPerSecond } = this.client.rest.options;
    return new REST({
      api,
      version,
      // The bot's global rate, as the client was made with (see createDiscordClient).
      globalRequestsPerSecond,
      retries: 0,
      timeout: sendTimeoutMs + REST_TIMEOUT_MARGIN_MS,
      rejectOnRateLimit: (data) => data.retryAfter >= sendTimeoutMs,
    });
  }

  private readonly usernames = new RecentMap<string, string>(1_000);
  private readonly resolvedTargets = new RecentMap<string, Target>(5_000);

  /** The speaker's name as Discord accepts it, worked out once per avatar name. */
  private usernameOf(speaker: { avatarId: string; name: string }): string {
    const key = `${speaker.avatarId}\u0000${speaker.name}`;
    let username = this.usernames.get(key);
    if (username === undefined) {
      username = webhookUsername(speaker.name, speaker.avatarId);
      this.usernames.set(key, username);
    }
    return username;
  }

  /** Problems stopping the bot from speaking, per channel (or in one channel). */
  problems(channelId?: string): ChannelProblem[] {
    if (channelId !== undefined) {
      const one = this.problemsByChannel.get(channelId);
      return one ? [one] : [];
    }
    return [...this.problemsByChannel.values()];
  }

  async send(message: TransportMessage, signal?: AbortSignal): Promise<TransportReceipt> {
    const key = message.idempotencyKey;
    const known = this.delivered.get(key);
    if (known !== undefined) return { messageId: known, duplicate: true };
    // Known targets, webhooks and quotes are taken without a promise (most sends find them all).
    const target = this.knownTarget(message.channelId) ?? (await this.target(message.channelId, signal));
    const posted =
      target.kind === 'direct'
        ? await this.sendDirect(target, message, signal)
        : await this.sendByWebhook(target, message, signal);
    this.delivered.set(message.channelId, key, posted.id);
    // Delivered: never looked for again, so when it was first tried no longer matters.
    this.attempted.delete(key);
    if (message.speaker)
      this.memory.rememberAvatarMessage(posted.id, message.speaker.avatarId, message.channelId);
    this.problemsByChannel.delete(message.channelId);
    return posted.duplicate ? { messageId: posted.id, duplicate: true } : { messageId: posted.id };
  }

  private async sendByWebhook(
    target: Extract<Target, { kind: 'webhook' }>,
    message: TransportMessage,
    signal: AbortSignal | undefined,
  ): Promise<{ id: string; duplicate?: boolean }> {
    const context = { channelId: message.channelId, ...(target.name ? { channelName: target.name } : {}) };
    const username = message.speaker ? this.usernameOf(message.speaker) : undefined;
    const { content, allowedUsers } =
      this.renderKnown(message, target.guildId) ?? (await this.render(message, target.guildId, signal));
    const files = toFiles(message);
    const body = {
      ...(content !== '' ? { content } : {}),
      ...(username ? { username } : {}),
      ...(message.speaker?.pictureUrl ? { avatar_url: message.speaker.pictureUrl } : {}),
      allowed_mentions: { parse: [], users: allowedUsers, roles: [] },
    };

    const since = this.attempted.get(message.idempotencyKey) ?? message.resumedFrom;
    if (since !== undefined) {
      const found = await this.findPosted(
        target.threadId ?? target.webhookChannelId,
        content,
        username,
        since,
        signal,
        message.replyTo ? discordMessageIdOf(message.replyTo.messageId) : undefined,
      );
      if (found) {
        this.reconciled += 1;
        this.log.info(
          { key: message.idempotencyKey, messageId: found },
          'part was already posted; not sending again',
        );
        return { id: found, duplicate: true };
      }
    }
    // Noted before the post: a retry may start while this post still hangs (its answer lost).
    this.attempted.set(message.idempotencyKey, Date.now());
    return this.postByWebhook(target, { body, files }, context, signal);
  }

  /** Executes the channel's webhook; a webhook deleted behind the bot's back is made again, once. */
  private async postByWebhook(
    target: Extract<Target, { kind: 'webhook' }>,
    payload: { body: Record<string, unknown>; files: RawFile[] },
    context: { channelId: string; channelName?: string },
    signal: AbortSignal | undefined,
  ): Promise<{ id: string; duplicate?: boolean }> {
    const execute = (hook: WebhookRef) =>
      this.webhookRest.post(Routes.webhook(hook.id, hook.token), {
        body: payload.body,
        files: payload.files,
        auth: false,
        query: makeURLSearchParams({
          wait: true,
          ...(target.threadId ? { thread_id: target.threadId } : {}),
        }),
        ...(signal ? { signal } : {}),
      }) as Promise<PostedMessage>;

    let hook =
      this.webhooks.found(target.webhookChannelId) ?? (await this.webhook(target.webhookChannelId, context));
    try {
      return await execute(hook);
    } catch (error) {
      if (!isUnknownWebhook(error)) throw this.failure(error, { ...context, permission: 'Send Messages' });
      // Deleted behind our back: make a new one (once, shared with racing sends) and send again.
      this.log.warn(
        { channelId: target.webhookChannelId, webhookId: hook.id },
        'channel webhook was deleted; recreating it',
      );
      this.webhooks.invalidate(hook);
      hook = await this.webhook(target.webhookChannelId, context);
      try {
        return await execute(hook);
      } catch (again) {
        throw this.failure(again, { ...context, permission: 'Send Messages' });
      }
    }
  }

  private async webhook(
    channelId: string,
    context: { channelId: string; channelName?: string },
  ): Promise<WebhookRef> {
    try {
      return await this.webhooks.get(channelId);
    } catch (error) {
      throw this.failure(error, { ...context, permission: 'Manage Webhooks' });
    }
  }

  private async sendDirect(
    target: Extract<Target, { kind: 'direct' }>,
    message: TransportMessage,
    signal: AbortSignal | undefined,
  ): Promise<{ id: string; duplicate?: boolean }> {
    const speaker = message.speaker;
    const label = speaker
      ? `**${speaker.emoji ? `${speaker.emoji} ` : ''}${escapeMarkdown(speaker.name)}**: `
      : '';
    const text = message.text ?? '';
    const content = text !== '' ? `${label}${text}`.slice(0, DISCORD_MAX_MESSAGE) : '';
    const body = {
      ...(content !== '' ? { content } : {}),
      // Discord drops a second message with the same nonce from the same author (for a few minutes).
      nonce: nonceOf(message.idempotencyKey),
      enforce_nonce: true,
      allowed_mentions: { parse: [], replied_user: false },
      ...(message.replyTo
        ? {
            message_reference: {
              message_id: discordMessageIdOf(message.replyTo.messageId),
              fail_if_not_exists: false,
            },
          }
        : {}),
    };
    try {
      const posted = (await this.client.rest.post(Routes.channelMessages(target.channelId), {
        body,
        files: toFiles(message),
        ...(signal ? { signal } : {}),
      })) as PostedMessage;
      return { id: posted.id };
    } catch (error) {
      throw this.failure(error, { channelId: target.channelId, permission: 'Send Messages' });
    }
  }

  /** The text to post: the quote line on a reply's first part, then the part's text and any URLs. */
  private async render(
    message: TransportMessage,
    guildId: string | undefined,
    signal: AbortSignal | undefined,
  ): Promise<Rendered> {
    // An answer to an edit replies to the edited message (discordMessageIdOf).
    const quoted = message.replyTo
      ? await this.quoteTarget(
          message.channelId,
          discordMessageIdOf(message.replyTo.messageId),
          guildId,
          signal,
        )
      : undefined;
    return compose(message, quoted);
  }

  /** The message's content when nothing needs asking Discord (no quote, or a remembered one). */
  private renderKnown(message: TransportMessage, guildId: string | undefined): Rendered | undefined {
    if (!message.replyTo) return compose(message, undefined);
    const quoted = this.rememberedQuote(
      message.channelId,
      discordMessageIdOf(message.replyTo.messageId),
      guildId,
    );
    return quoted ? compose(message, quoted) : undefined;
  }

  /** What is known of the message answered: remembered, else fetched; a deleted one has no text. */
  private async quoteTarget(
    channelId: string,
    messageId: string,
    guildId: string | undefined,
    signal: AbortSignal | undefined,
  ): Promise<Quoted> {
    const remembered = this.rememberedQuote(channelId, messageId, guildId);
    if (remembered) return remembered;
    const base = { channelId, messageId, ...(guildId ? { guildId } : {}) };
    try {
      const fetched = (await this.client.rest.get(Routes.channelMessage(channelId, messageId), {
        ...(signal ? { signal } : {}),
      })) as PostedMessage & {
        mentions?: { id: string }[];
        referenced_message?: { author?: { id: string } } | null;
        webhook_id?: string;
      };
      const repliedTo = fetched.referenced_message?.author?.id;
      return {
        quote: { ...base, authorId: fetched.author.id, text: fetched.content },
        ping: repliedTo !== undefined && (fetched.mentions ?? []).some((u) => u.id === repliedTo),
      };
    } catch (error) {
      if (signal?.aborted) throw toTransportError(error, { channelId, permission: 'Read Message History' });
      // Deleted, or not readable: quote nothing of it.
      return { quote: base, ping: false };
    }
  }

  /** The message answered, when remembered. */
  private rememberedQuote(
    channelId: string,
    messageId: string,
    guildId: string | undefined,
  ): Quoted | undefined {
    const remembered = this.memory.get(messageId);
    if (!remembered) return undefined;
    return {
      quote: {
        channelId,
        messageId,
        ...(guildId ? { guildId } : {}),
        authorId: remembered.authorId,
        text: remembered.text,
      },
      ping: remembered.pinged,
    };
  }

  /**
   * A message the bot's webhook posted with this name and text since `since`, if any. An answer's
   * quote line may read differently after a restart (rebuilt from Discord), so for a reply only
   * the message it links to and the text after it must match.
   */
  private async findPosted(
    channelId: string,
    content: string,
    username: string | undefined,
    since: number,
    signal: AbortSignal | undefined,
    replyToMessageId: string | undefined,
  ): Promise<string | undefined> {
    try {
      const recent = (await this.client.rest.get(Routes.channelMessages(channelId), {
        query: makeURLSearchParams({
          after: SnowflakeUtil.generate({ timestamp: Math.max(0, since - RECONCILE_SLACK_MS) }).toString(),
          limit: 100,
        }),
        ...(signal ? { signal } : {}),
      })) as PostedMessage[];
      const appId = this.client.application?.id;
      const hit = recent.find(
        (m) =>
          m.webhook_id !== undefined &&
          (this.webhooks.isOwn(m.webhook_id) || (appId !== undefined && m.application_id === appId)) &&
          (username === undefined || m.author.username === username) &&
          (m.content === content ||
            (replyToMessageId !== undefined && sameQuotedAnswer(m.content, content, replyToMessageId))),
      );
      return hit?.id;
    } catch (error) {
      // Rate-limited for long: look again after the wait rather than post blind.
      if (error instanceof RateLimitError)
        throw toTransportError(error, { channelId, permission: 'Read Message History' });
      // Not readable: send, as a platform without idempotent sends must (at most one extra copy).
      this.log.warn({ channelId, err: error }, 'could not check whether a part was already posted');
      return undefined;
    }
  }

  /** The channel's target when the client knows it already (it is ready and has the channel). */
  private knownTarget(channelId: string): Target | undefined {
    if (!this.client.isReady()) return undefined;
    return this.cachedTarget(channelId) ?? this.resolvedTargets.get(channelId);
  }

  private async target(channelId: string, signal: AbortSignal | undefined): Promise<Target> {
    // Routing may resend the outbox before login completes: wait for the gateway's READY.
    if (!this.client.isReady()) await readyOf(this.client, signal);
    const known = this.knownTarget(channelId);
    if (known) return known;
    // Not cached, or cached without its parent (a thread the gateway has not shown): ask Discord,
    // once per channel.
    const target = await this.askTarget(channelId, signal);
    this.resolvedTargets.set(channelId, target);
    return target;
  }

  /** The target of a channel the client has cached (a thread only with its parent). */
  private cachedTarget(channelId: string): Target | undefined {
    const channel = this.client.channels.cache.get(channelId);
    if (channel) {
      if (channel.isDMBased()) return { kind: 'direct', channelId };
      const name = 'name' in channel && typeof channel.name === 'string' ? channel.name : undefined;
      // A thread first seen in a message arrives without its parent: ask Discord below.
      if (channel.isThread() && channel.parentId)
        return this.threadTarget(channelId, channel.parentId, channel.guildId, name);
      if (!channel.isThread())
        return {
          kind: 'webhook',
          webhookChannelId: channel.id,
          guildId: channel.guildId,
          ...(name ? { name } : {}),
        };
    }
    return undefined;
  }

  /** Asks Discord what a channel is (the client has not cached it). */
  private async askTarget(channelId: string, signal: AbortSignal | undefined): Promise<Target> {
    let raw: { id: string; type: number; guild_id?: string; parent_id?: string | null; name?: string };
    try {
      raw = (await this.client.rest.get(Routes.channel(channelId), {
        ...(signal ? { signal } : {}),
      })) as typeof raw;
    } catch (error) {
      if (error instanceof DiscordAPIError && error.code === DiscordApiCode.unknownChannel)
        throw new TransportError(
          'TROUPE_TRANSPORT_FAILED',
          `Discord has no channel ${channelId} (deleted, or the bot was removed from its server).`,
          { cause: error, retryable: false, details: { channelId } },
        );
      throw this.failure(error, { channelId, permission: 'View Channel' });
    }
    const target: Target =
      raw.type === ChannelType.DM || raw.type === ChannelType.GroupDM || !raw.guild_id
        ? { kind: 'direct', channelId }
        : THREAD_TYPES.has(raw.type)
          ? this.threadTarget(channelId, raw.parent_id ?? undefined, raw.guild_id, raw.name)
          : {
              kind: 'webhook',
              webhookChannelId: channelId,
              guildId: raw.guild_id,
              ...(raw.name ? { name: raw.name } : {}),
            };
    return target;
  }

  private threadTarget(
    threadId: string,
    parentId: string | undefined,
    guildId: string,
    name: string | undefined,
  ): Target {
    if (!parentId)
      throw new TransportError('TROUPE_TRANSPORT_FAILED', `Thread ${threadId} has no parent channel.`, {
        retryable: false,
        details: { channelId: threadId },
      });
    return { kind: 'webhook', webhookChannelId: parentId, threadId, guildId, ...(name ? { name } : {}) };
  }

  /** A send's failure as a transport error; a missing permission is also reported once. */
  private failure(
    error: unknown,
    context: { channelId: string; channelName?: string; permission: string },
  ): TransportError {
    const failure = toTransportError(error, context);
    if (isMissingPermission(error) || failure.code === 'TROUPE_TRANSPORT_FAILED') {
      if (!this.problemsByChannel.has(context.channelId) && !failure.retryable) {
        const problem: ChannelProblem = {
          channelId: context.channelId,
          code: failure.code,
          message: failure.message,
          since: Date.now(),
        };
        this.problemsByChannel.set(context.channelId, problem);
        this.log.warn({ channelId: context.channelId, code: failure.code }, failure.message);
        this.onProblem?.(problem);
      }
    }
    return failure;
  }
}

/**
 * The requests a send makes: channel lookups, webhook lookups and creation, messages read and
 * posted, webhook executions (not interactions, command registration or login).
 */
const SEND_ROUTE = /\/(webhooks\/\d+\/[^/]+|channels\/\d+(\/webhooks|\/messages(\/\d+)?)?)$/u;

const THREAD_TYPES = new Set<number>([
  ChannelType.AnnouncementThread,
  ChannelType.PublicThread,
  ChannelType.PrivateThread,
]);

/** Resolves when the client is ready; rejects as an abort when `signal` fires first. */
function readyOf(client: Client, signal: AbortSignal | undefined): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const done = () => {
      signal?.removeEventListener('abort', abort);
      resolve();
    };
    const abort = () => {
      client.off(Events.ClientReady, done);
      reject(
        new TransportError(
          'TROUPE_TRANSPORT_ABORTED',
          'The send was aborted before the bot connected to Discord.',
          {
            retryable: true,
          },
        ),
      );
    };
    if (signal?.aborted) {
      abort();
      return;
    }
    client.once(Events.ClientReady, done);
    signal?.addEventListener('abort', abort, { once: true });
  });
}

/** Audio and files that carry bytes, as multipart uploads. */
/** The content: the quote line of the message answered (if any), the text, links to attachments. */
function compose(message: TransportMessage, quoted: Quoted | undefined): Rendered {
  const lines: string[] = [];
  const allowedUsers: string[] = [];
  if (quoted) {
    lines.push(replyQuote(quoted.quote));
    if (quoted.ping && quoted.quote.authorId) allowedUsers.push(quoted.quote.authorId);
  }
  if (message.text) lines.push(message.text);
  for (const a of message.attachments ?? []) if (a.data === undefined && a.url) lines.push(a.url);
  return { content: lines.join('\n').slice(0, DISCORD_MAX_MESSAGE), allowedUsers };
}

function toFiles(message: TransportMessage): RawFile[] {
  return (message.attachments ?? [])
    .filter((a) => a.data !== undefined)
    .map((a) => ({ name: a.name, data: Buffer.from(a.data as Uint8Array), contentType: a.mediaType }));
}

/** Discord's nonce holds 25 characters: a digest of the part key. */
function nonceOf(key: string): string {
  return createHash('sha256').update(key).digest('base64url').slice(0, 25);
}

function escapeMarkdown(text: string): string {
  return text.replace(/([\\*_~`|])/gu, '\\$1');
}
