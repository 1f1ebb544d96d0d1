import { type REST, Routes } from 'discord.js';
import type { Logger } from '../../logging/logger.js';

/** A channel webhook the bot may execute. */
export interface WebhookRef {
  id: string;
  token: string;
  /** The text or forum channel it belongs to. */
  channelId: string;
}

interface WebhookJson {
  id: string;
  type: number;
  token?: string;
  channel_id: string;
  application_id?: string | null;
  name?: string | null;
}

/** How a {@link DiscordWebhooks} finds and makes webhooks. */
export interface DiscordWebhooksOptions {
  rest: REST;
  /** The bot's application id (known after login), to recognise webhooks it made. */
  applicationId: () => string | undefined;
  /** The name webhooks are created with (messages override it per avatar). Default `Troupe`. */
  name?: string;
  logger: Logger;
}

/**
 * One webhook per channel, never one per avatar (Discord allows 15 per channel and 1,000 per
 * guild): the bot's own webhook is found or created on first use, once even when several sends
 * race for it (they share one lookup), and cached. A webhook deleted behind the bot's back is
 * dropped with {@link invalidate} by the send that found out, and the next {@link get} makes a new
 * one; sends racing with that one share its replacement instead of each creating another.
 */
export class DiscordWebhooks {
  private readonly cache = new Map<string, { lookup: Promise<WebhookRef>; ref?: WebhookRef }>();
  private readonly known = new Set<string>();
  private readonly name: string;
  /** Webhooks created, for figures and tests. */
  created = 0;

  constructor(private readonly options: DiscordWebhooksOptions) {
    this.name = options.name ?? 'Troupe';
  }

  /** The bot's webhook for a text or forum channel, found or created once. */
  get(channelId: string): Promise<WebhookRef> {
    const cached = this.cache.get(channelId);
    if (cached) return cached.lookup;
    const entry: { lookup: Promise<WebhookRef>; ref?: WebhookRef } = { lookup: this.findOrCreate(channelId) };
    this.cache.set(channelId, entry);
    entry.lookup.then(
      (ref) => {
        entry.ref = ref;
      },
      // A failed lookup is not cached: the next send tries again (permissions may have been fixed).
      () => {
        if (this.cache.get(channelId) === entry) this.cache.delete(channelId);
      },
    );
    return entry.lookup;
  }

  /**
   * The channel's webhook when a lookup already found it, else undefined (then
   * {@link DiscordWebhooks.get}). A send takes it without a promise: most sends go to a channel
   * whose webhook is known.
   */
  found(channelId: string): WebhookRef | undefined {
    return this.cache.get(channelId)?.ref;
  }

  /**
   * Forgets `ref` if it is still the channel's cached webhook; when a racing send already replaced
   * it (or a new lookup is under way), the replacement stays.
   */
  invalidate(ref: WebhookRef): void {
    const entry = this.cache.get(ref.channelId);
    if (entry?.ref?.id === ref.id) this.cache.delete(ref.channelId);
  }

  /** True when `webhookId` is a webhook this bot uses (its avatars' messages come from it). */
  isOwn(webhookId: string): boolean {
    return this.known.has(webhookId);
  }

  private async findOrCreate(channelId: string): Promise<WebhookRef> {
    const { rest, logger } = this.options;
    const appId = this.options.applicationId();
    const existing = (await rest.get(Routes.channelWebhooks(channelId))) as WebhookJson[];
    const own = existing.find(
      (w) => w.type === 1 && typeof w.token === 'string' && appId !== undefined && w.application_id === appId,
    );
    let ref: WebhookRef;
    if (own?.token) {
      ref = { id: own.id, token: own.token, channelId };
    } else {
      const made = (await rest.post(Routes.channelWebhooks(channelId), {
        body: { name: this.name },
        reason: 'Troupe: avatars speak through one webhook per channel',
      })) as WebhookJson;
      if (!made.token) throw new Error(`Discord created webhook ${made.id} without a token`);
      this.created += 1;
      logger.info({ channelId, webhookId: made.id }, 'created the channel webhook');
      ref = { id: made.id, token: made.token, channelId };
    }
    this.known.add(ref.id);
    return ref;
  }
}
