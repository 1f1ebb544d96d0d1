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
    ...(options.apiUrl ? { rest: { api: options.apiUrl } } : {}),
  });
}
