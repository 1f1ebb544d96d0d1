import { Client, GatewayIntentBits, Options, Partials } from 'discord.js';

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
    makeCache: Options.cacheWithLimits({
      ...Options.DefaultMakeCacheSettings,
      MessageManager: 20,
      ReactionManager: 0,
      PresenceManager: 0,
      GuildMemberManager: { maxSize: 200, keepOverLimit: (member) => member.id === member.client.user.id },
    }),
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
