import { ChannelRecentMap } from './channelRecentMap.js';

/** What the adapter remembers of a message someone wrote, to quote it in an answer. */
export interface RememberedMessage {
  id: string;
  channelId: string;
  /** Absent in DMs. */
  guildId?: string;
  authorId: string;
  authorName: string;
  /** The text as people read it (mentions as names). */
  text: string;
  /** The message was a reply that pinged the person it replied to: an answer pings its author back. */
  pinged: boolean;
}

/** How many recent messages of each kind are kept by default, in all (about 200 bytes each). */
export const DEFAULT_REMEMBERED_MESSAGES = 5_000;
/**
 * How many of a channel's latest messages of each kind are kept by default. An answer quotes a
 * message from moments before; one older than this is read from Discord once if ever answered, and
 * a reply to an older avatar message still reaches its avatar by the name Discord shows with it.
 */
export const DEFAULT_REMEMBERED_PER_CHANNEL = 20;

/**
 * Recent messages, shared by the inbound side (which records what people write) and the
 * transport (which quotes the message it answers, and records which avatar wrote each message it
 * sent, so a reply to any part of an answer reaches that avatar). Bounded per channel and in all;
 * a deleted message is forgotten at once so an answer never quotes what its author took back.
 */
export class DiscordMessageMemory {
  private readonly messages: ChannelRecentMap<RememberedMessage>;
  private readonly avatarMessages: ChannelRecentMap<string>;

  constructor(capacity = DEFAULT_REMEMBERED_MESSAGES, perChannel = DEFAULT_REMEMBERED_PER_CHANNEL) {
    this.messages = new ChannelRecentMap(perChannel, capacity);
    this.avatarMessages = new ChannelRecentMap(perChannel, capacity);
  }

  remember(message: RememberedMessage): void {
    this.messages.set(message.channelId, message.id, message);
  }

  get(messageId: string): RememberedMessage | undefined {
    return this.messages.get(messageId);
  }

  /** Notes that an avatar's message went out with this id, in this channel (or thread). */
  rememberAvatarMessage(messageId: string, avatarId: string, channelId: string): void {
    this.avatarMessages.set(channelId, messageId, avatarId);
  }

  /** The avatar that wrote a message the bot sent, if remembered. */
  avatarOf(messageId: string): string | undefined {
    return this.avatarMessages.get(messageId);
  }

  /** Forgets a deleted message. */
  forget(messageId: string): void {
    this.messages.delete(messageId);
  }

  /** Messages remembered now (both kinds). */
  get size(): number {
    return this.messages.size + this.avatarMessages.size;
  }

  /** Forgets everything (what is needed again is read from Discord). */
  clear(): void {
    this.messages.clear();
    this.avatarMessages.clear();
  }
}
