import { RecentMap } from './recentMap.js';

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

/** How many recent messages are kept by default (about 200 bytes each). */
export const DEFAULT_REMEMBERED_MESSAGES = 5_000;

/**
 * Recent messages, shared by the inbound side (which records what people write) and the
 * transport (which quotes the message it answers, and records which avatar wrote each message it
 * sent, so a reply to any part of an answer reaches that avatar). Bounded; a deleted message is
 * forgotten at once so an answer never quotes what its author took back.
 */
export class DiscordMessageMemory {
  private readonly messages: RecentMap<string, RememberedMessage>;
  private readonly avatarMessages: RecentMap<string, string>;

  constructor(capacity = DEFAULT_REMEMBERED_MESSAGES) {
    this.messages = new RecentMap(capacity);
    this.avatarMessages = new RecentMap(capacity);
  }

  remember(message: RememberedMessage): void {
    this.messages.set(message.id, message);
  }

  get(messageId: string): RememberedMessage | undefined {
    return this.messages.get(messageId);
  }

  /** Notes that an avatar's message went out with this id. */
  rememberAvatarMessage(messageId: string, avatarId: string): void {
    this.avatarMessages.set(messageId, avatarId);
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
}
