import {
  type Client,
  Events,
  type Message,
  MessageFlags,
  MessageType,
  type OmitPartialGroupDMChannel,
  type PartialMessage,
} from 'discord.js';
import { Observable } from 'rxjs';
import { type Logger, silentLogger } from '../../logging/logger.js';
import { createMentionMatcher, type MentionMatcher } from '../../textRules/mentionMatcher.js';
import type { DiscordMessageMemory } from './discordMessageMemory.js';
import type { DiscordWebhooks } from './discordWebhooks.js';
import { editEventId } from './editEventId.js';
import { RecentMap } from './recentMap.js';
import { webhookUsername } from './webhookUsername.js';

/** What the Discord adapter needs to know of an avatar (an avatar definition has all of it). */
export interface DiscordAvatar {
  id: string;
  name: string;
  aliases?: readonly string[] | undefined;
  emoji?: string | undefined;
  pictureUrl?: string | undefined;
  /** Set on an avatar summoning created (who, when): `/forget` removes only these. */
  created?: { by: { id: string; name: string }; at: number } | undefined;
}

/**
 * The avatars, as a list or as a function that returns them as they are now (a runtime's
 * `avatars` changes when summoning creates one or `/forget` removes one).
 */
export type DiscordAvatars = readonly DiscordAvatar[] | (() => readonly DiscordAvatar[]);

/** The avatars as they are now. */
export function avatarsNow(avatars: DiscordAvatars): readonly DiscordAvatar[] {
  return typeof avatars === 'function' ? avatars() : avatars;
}

/** A `channel.message` event for the runtime, made from a Discord message. */
export interface DiscordChannelMessageEvent {
  type: 'channel.message';
  channel: { kind: 'discord'; id: string };
  messageId: string;
  author: { kind: 'human'; id: string; name: string };
  text: string;
  mentions?: string[];
  replyTo?: { messageId: string; avatarId?: string };
  voice?: boolean;
}

/** How Discord messages become runtime events. */
export interface DiscordInboundOptions {
  client: Client;
  avatars: DiscordAvatars;
  /** The transport's webhooks (to recognise the avatars' own messages) and message memory. */
  webhooks: DiscordWebhooks;
  memory: DiscordMessageMemory;
  /** Other bots whose messages count (`'all'`, or their user ids). Default none. */
  allowBots?: 'all' | readonly string[];
  /** Whether direct messages to the bot are answered. Default false. */
  directMessages?: boolean;
  /**
   * Messages from allowed bots heard in a channel after a person's message, before the avatars
   * stop hearing bots there until a person writes again: two bots answering each other would
   * otherwise talk forever. Default 3 (as `BOT_MENTION_CASCADE_LIMIT` for the avatars).
   */
  botMessagesPerPerson?: number;
  logger?: Logger;
}

// People's display names may be long; the runtime takes up to 100 characters.
const MAX_NAME = 100;
const DEFAULT_BOT_MESSAGES_PER_PERSON = 3;
const CHANNELS_TRACKED = 10_000;

const fold = (s: string) => s.normalize('NFKC').toLocaleLowerCase('en');

interface AvatarLookup {
  byUsername: Map<string, string>;
  byLabel: Map<string, string>;
  matcher: MentionMatcher;
}

function avatarLookup(avatars: readonly DiscordAvatar[]): AvatarLookup {
  const byUsername = new Map<string, string>();
  const byLabel = new Map<string, string>();
  for (const a of avatars) {
    byUsername.set(webhookUsername(a.name, a.id), a.id);
    for (const label of [a.id, a.name, ...(a.aliases ?? [])]) byLabel.set(fold(label), a.id);
  }
  const matcher = createMentionMatcher(
    avatars.map((a) => ({
      id: a.id,
      name: a.name,
      ...(a.aliases ? { aliases: [...a.aliases] } : {}),
      ...(a.emoji ? { emoji: a.emoji } : {}),
    })),
  );
  return { byUsername, byLabel, matcher };
}

/**
 * Turns a Discord message into a runtime event, or `undefined` with the reason it is ignored:
 * the bot's own avatars (their webhook messages: avatars already see each other through the
 * runtime, and nobody answers itself), the bot itself, other bots and foreign webhooks unless
 * allowed (and, allowed, past `botMessagesPerPerson` since a person wrote in the channel), system
 * messages, and DMs unless enabled. Role mentions of a role named like an avatar
 * (any case, NFKC) are mentions of that avatar; a reply to an avatar's message addresses that
 * avatar; attachments are noted in the text so the model knows they are there.
 */
export class DiscordMessageConverter {
  /** Per channel: messages from other bots heard since a person last wrote there. */
  private readonly botRuns = new RecentMap<string, number>(CHANNELS_TRACKED);
  private known: { list: readonly DiscordAvatar[]; lookup: AvatarLookup } | undefined;

  constructor(private readonly options: DiscordInboundOptions) {}

  /** Webhook usernames, labels and the mention matcher of the avatars as they are now (rebuilt when they change). */
  private get lookup(): AvatarLookup {
    const list = avatarsNow(this.options.avatars);
    if (this.known?.list !== list) this.known = { list, lookup: avatarLookup(list) };
    return this.known.lookup;
  }

  private get byUsername(): ReadonlyMap<string, string> {
    return this.lookup.byUsername;
  }

  private get byLabel(): ReadonlyMap<string, string> {
    return this.lookup.byLabel;
  }

  private get matcher(): MentionMatcher {
    return this.lookup.matcher;
  }

  /** The event for a new message, or why there is none. */
  convert(message: Message): { event: DiscordChannelMessageEvent } | { ignored: string } {
    const { client } = this.options;
    if (message.webhookId) {
      if (this.isOwnWebhook(message)) return { ignored: 'an avatar message (the bot’s own webhook)' };
      if (!this.botAllowed(message.webhookId)) return { ignored: 'a webhook message' };
    } else if (message.author.id === client.user?.id) {
      return { ignored: 'the bot’s own message' };
    } else if (message.author.bot && !this.botAllowed(message.author.id)) {
      return { ignored: 'another bot' };
    }
    if (message.type !== MessageType.Default && message.type !== MessageType.Reply)
      return { ignored: 'a system message' };
    if (!message.inGuild() && !this.options.directMessages)
      return { ignored: 'a direct message (DMs are off)' };

    const text = this.textOf(message);
    const voice = message.flags.has(MessageFlags.IsVoiceMessage);
    if (text.trim() === '' && !voice) return { ignored: 'nothing to read (no text, no attachment)' };
    if (this.botLoop(message)) return { ignored: 'another bot, heard enough times since a person wrote' };
    const mentions = this.roleMentions(message);
    const replyTo = this.replyTarget(message);
    const name = displayName(message);
    this.options.memory.remember({
      id: message.id,
      channelId: message.channelId,
      ...(message.guildId ? { guildId: message.guildId } : {}),
      authorId: message.author.id,
      authorName: name,
      text,
      pinged: this.repliedWithPing(message),
    });
    return {
      event: {
        type: 'channel.message',
        channel: { kind: 'discord', id: message.channelId },
        messageId: message.id,
        author: { kind: 'human', id: message.author.id, name },
        text,
        ...(mentions.length > 0 ? { mentions } : {}),
        ...(replyTo ? { replyTo } : {}),
        ...(voice ? { voice: true } : {}),
      },
    };
  }

  /**
   * An edit matters when it addresses an avatar the message did not address before (a name
   * fixed, a mention added): it comes as a new message then, so that avatar answers. Other edits
   * change nothing already said. What the message said before is discord.js's cached copy, or,
   * once discord.js no longer keeps it, the text the adapter remembers of the channel's latest
   * messages.
   */
  convertEdit(
    before: Message | PartialMessage,
    after: Message,
  ): { event: DiscordChannelMessageEvent } | { ignored: string } {
    const remembered = before.partial ? this.options.memory.get(after.id) : undefined;
    const unchanged = before.partial
      ? remembered === undefined || remembered.text === this.textOf(after)
      : before.content === after.content;
    if (unchanged) {
      // Unknown before, or the same text: a quote must still not show what its author edited out.
      if (before.partial) this.refresh(after);
      return { ignored: 'an edit that changes no address' };
    }
    const converted = this.convert(after);
    if ('ignored' in converted) return converted;
    const addressed = (text: string, platform: string[]) =>
      new Set(this.matcher.find(text, { platformMentions: platform }));
    // The remembered text shows mentions as names, which the matcher reads as names.
    const was = remembered
      ? addressed(remembered.text, [])
      : addressed(before.content ?? '', this.roleMentions(before));
    const now = addressed(after.content, converted.event.mentions ?? []);
    if (![...now].some((id) => !was.has(id))) return { ignored: 'an edit that changes no address' };
    const edited = after.editedTimestamp ?? Date.now();
    return { event: { ...converted.event, messageId: editEventId(after.id, edited) } };
  }

  /** Updates the remembered text of an edited message, if it is remembered. */
  private refresh(message: Message): void {
    const remembered = this.options.memory.get(message.id);
    if (remembered) this.options.memory.remember({ ...remembered, text: this.textOf(message) });
  }

  private isOwnWebhook(message: Message): boolean {
    const webhookId = message.webhookId as string;
    if (this.options.webhooks.isOwn(webhookId)) return true;
    // Made by this application (another process's, or before a restart).
    const appId = this.options.client.application?.id;
    return appId !== undefined && message.applicationId === appId;
  }

  /** Counts an allowed bot's message in its channel; true past the limit (a person resets it). */
  private botLoop(message: Message): boolean {
    const channelId = message.channelId;
    if (message.webhookId === null && !message.author.bot) {
      this.botRuns.delete(channelId);
      return false;
    }
    const heard = this.botRuns.get(channelId) ?? 0;
    if (heard >= (this.options.botMessagesPerPerson ?? DEFAULT_BOT_MESSAGES_PER_PERSON)) return true;
    this.botRuns.set(channelId, heard + 1);
    return false;
  }

  private botAllowed(id: string): boolean {
    const allow = this.options.allowBots;
    return allow === 'all' || (allow?.includes(id) ?? false);
  }

  /** Text as people read it (mentions as names), with attachments noted. */
  private textOf(message: Message): string {
    const notes = [...message.attachments.values()].map(
      (a) => `[attachment: ${a.name}${a.contentType ? `, ${a.contentType}` : ''}, ${formatSize(a.size)}]`,
    );
    return [message.cleanContent, ...notes].filter((s) => s !== '').join('\n');
  }

  /** Avatars mentioned as roles named after them. */
  private roleMentions(message: Message | PartialMessage): string[] {
    const ids: string[] = [];
    for (const role of message.mentions?.roles?.values() ?? []) {
      const id = this.byLabel.get(fold(role.name));
      if (id !== undefined && !ids.includes(id)) ids.push(id);
    }
    return ids;
  }

  private replyTarget(message: Message): { messageId: string; avatarId?: string } | undefined {
    const ref = message.reference;
    if (!ref?.messageId || (ref.channelId && ref.channelId !== message.channelId)) return undefined;
    const avatarId =
      this.options.memory.avatarOf(ref.messageId) ?? this.avatarOfCached(message, ref.messageId);
    return { messageId: ref.messageId, ...(avatarId ? { avatarId } : {}) };
  }

  /** The avatar that wrote a cached message from the bot's webhook, by the name it showed. */
  private avatarOfCached(message: Message, messageId: string): string | undefined {
    const target = message.channel.messages.cache.get(messageId);
    if (!target?.webhookId || !this.isOwnWebhook(target)) return undefined;
    return this.byUsername.get(target.author.username);
  }

  /** Whether a reply pinged the person it replied to (Discord lists them among the mentions). */
  private repliedWithPing(message: Message): boolean {
    const repliedUser = message.mentions.repliedUser;
    return message.reference !== null && repliedUser !== null && message.mentions.users.has(repliedUser.id);
  }
}

/**
 * The runtime's inbound stream from a discord.js client: new messages (and edits that address
 * an avatar anew) as `channel.message` events; deletions (one, or a moderator's purge) make the
 * adapter forget what it quoted.
 */
export function discordMessageEvents(options: DiscordInboundOptions): Observable<DiscordChannelMessageEvent> {
  const converter = new DiscordMessageConverter(options);
  const log = options.logger ?? silentLogger();
  const { client, memory } = options;
  return new Observable((subscriber) => {
    const emit = (result: { event: DiscordChannelMessageEvent } | { ignored: string }, id: string) => {
      if ('event' in result) subscriber.next(result.event);
      else log.trace?.({ messageId: id, reason: result.ignored }, 'discord message ignored');
    };
    const onCreate = (message: OmitPartialGroupDMChannel<Message>) => {
      try {
        emit(converter.convert(message), message.id);
      } catch (error) {
        log.warn({ messageId: message.id, err: error }, 'could not read a discord message; skipped');
      }
    };
    const onUpdate = (
      before: OmitPartialGroupDMChannel<Message | PartialMessage>,
      after: OmitPartialGroupDMChannel<Message>,
    ) => {
      try {
        emit(converter.convertEdit(before, after), after.id);
      } catch (error) {
        log.warn({ messageId: after.id, err: error }, 'could not read a discord edit; skipped');
      }
    };
    const onDelete = (message: { id: string }) => memory.forget(message.id);
    // A moderator's purge deletes many at once (uncached ones come as partials, by id).
    const onBulkDelete = (messages: ReadonlyMap<string, unknown>) => {
      for (const id of messages.keys()) memory.forget(id);
    };
    client.on(Events.MessageCreate, onCreate);
    client.on(Events.MessageUpdate, onUpdate);
    client.on(Events.MessageDelete, onDelete);
    client.on(Events.MessageBulkDelete, onBulkDelete);
    return () => {
      client.off(Events.MessageCreate, onCreate);
      client.off(Events.MessageUpdate, onUpdate);
      client.off(Events.MessageDelete, onDelete);
      client.off(Events.MessageBulkDelete, onBulkDelete);
    };
  });
}

/** The name a person shows in the server (nickname, global name, username), clipped. */
function displayName(message: Message): string {
  const raw = message.member?.displayName ?? message.author.globalName ?? message.author.username;
  // The limit counts UTF-16 units, as the runtime does; a character is never cut in half.
  let name = '';
  for (const ch of raw.trim()) {
    if (name.length + ch.length > MAX_NAME) break;
    name += ch;
  }
  name = name.trim();
  return name === '' ? message.author.username.slice(0, MAX_NAME) || message.author.id : name;
}

function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${Math.round(bytes / 1024)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}
