import { Client, GatewayIntentBits, Options, Partials } from 'discord.js';

/**
 * Messages discord.js keeps per channel: the one being handled and the one it replies to (Discord
 * sends that along, and discord.js caches it just before the reply), whose webhook name tells which
 * avatar a person answered. An edit is compared with the text the adapter remembers.
 */
const MESSAGES_PER_CHANNEL = 2;

/** How {@link createDiscordClient} makes a client. */
export interface DiscordClientOptions {
  /** Whether direct messages to the bot are answered (adds the DM intent). Default false. */
  directMessages?: boolean;
  /**
   * Another REST base URL (`DISCORD_API_URL`), e.g. a REST proxy, as `https://host/api`; discord.js
   * appends the version. The gateway URL still comes from `GET /gateway/bot`.
   */
  apiUrl?: string;
  /**
   * Requests per second discord.js lets the bot make in all (its global limiter; default 50,
   * Discord's limit for most bots). Set it for a bot Discord granted more, or a Discord stand-in
   * without the limit. Read when the client is made: changing `client.rest.options` later does not
   * reach the transport's webhook client.
   */
  globalRequestsPerSecond?: number;
  /** Which shards this client runs (set by discord.js sharding; default: discord.js decides). */
  shards?: number | number[];
  shardCount?: number;
}

/**
 * A discord.js client with the intents the avatars need and no more: guilds (channels, roles,
 * threads), guild messages and their content (the privileged Message Content intent; enable it in
 * the Developer Portal), and direct messages only when enabled. Mentions are off by default for
 * everything the client sends (interaction replies included), and caches are bounded.
 */
export function createDiscordClient(options: DiscordClientOptions = {}): Client {
  const intents = [
    GatewayIntentBits.Guilds,
    GatewayIntentBits.GuildMessages,
    GatewayIntentBits.MessageContent,
  ];
  if (options.directMessages) intents.push(GatewayIntentBits.DirectMessages);
  return new Client({
    intents,
    // DM channels arrive uncached; edits and deletions of uncached messages still arrive by id.
    partials: [Partials.Channel, Partials.Message],
    allowedMentions: { parse: [], repliedUser: false },
    // Only what the adapter reads: channels, threads and roles (targets, permissions, role
    // mentions), the bot's own member, and the last two messages per channel (a reply and the
    // message it replies to; the adapter remembers what it quotes and compares edits with itself).
    // Nothing else grows with traffic: messages are also swept after an hour, users past a thousand.
    makeCache: Options.cacheWithLimits({
      ...Options.DefaultMakeCacheSettings,
      MessageManager: MESSAGES_PER_CHANNEL,
      ReactionManager: 0,
      PresenceManager: 0,
      GuildMemberManager: { maxSize: 200, keepOverLimit: (member) => member.id === member.client.user.id },
      UserManager: { maxSize: 1_000, keepOverLimit: (user) => user.id === user.client.user.id },
      ThreadMemberManager: 0,
      GuildStickerManager: 0,
      GuildEmojiManager: 0,
      GuildScheduledEventManager: 0,
      StageInstanceManager: 0,
      VoiceStateManager: 0,
      GuildInviteManager: 0,
      GuildBanManager: 0,
      AutoModerationRuleManager: 0,
    }),
    sweepers: {
      ...Options.DefaultSweeperSettings,
      messages: { interval: 600, lifetime: 3_600 },
    },
    ...(options.shards !== undefined ? { shards: options.shards } : {}),
    ...(options.shardCount !== undefined ? { shardCount: options.shardCount } : {}),
    rest: {
      ...(options.apiUrl ? { api: options.apiUrl } : {}),
      ...(options.globalRequestsPerSecond !== undefined
        ? { globalRequestsPerSecond: options.globalRequestsPerSecond }
        : {}),
    },
  });
}
