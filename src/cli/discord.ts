import type { AvatarDefinition } from '../actors/avatarDefinition.js';
import { startDiscordBot } from '../adapters/discord/discordBot.js';
import { createDiscordClient } from '../adapters/discord/discordClient.js';
import { discordInviteUrl } from '../adapters/discord/discordInvite.js';
import { type DiscordSettings, discordFromEnv } from '../adapters/discord/discordSettings.js';
import { DiscordTransport } from '../adapters/discord/discordTransport.js';
import { modelFromEnv } from '../adapters/llm/modelFromEnv.js';
import { lazyEntityLookup } from '../adapters/sql/lazyEntityLookup.js';
import { openDefaultStore } from '../adapters/store/storeFromEnv.js';
import { ConfigError } from '../config/configError.js';
import type { CoordinationConfig } from '../config/coordinationConfig.js';
import { replyFromEnv } from '../config/replySettings.js';
import { createRuntime } from '../createRuntime.js';
import { terminalText } from '../delivery/terminalText.js';
import { createLogger } from '../logging/logger.js';
import { type LogLevel, logLevelFromEnv } from '../logging/logLevel.js';
import { redactCredentials } from '../ports/redactCredentials.js';
import type { TroupeStore } from '../ports/store.js';
import { isTroupeError } from '../ports/troupeError.js';
import { loadAvatarsFile } from './avatarsFile.js';
import { fail } from './fail.js';
import { type OpenedEmailAssistant, openEmailAssistant } from './openEmailAssistant.js';

/** What `troupe discord` needs from the command line and its surroundings. */
export interface DiscordCommandOptions {
  avatarsFile: string;
  /** Guilds to register the slash commands in (instant); none: globally. */
  guildIds: readonly string[];
  config: CoordinationConfig;
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  env: Readonly<Record<string, string | undefined>>;
  /** Resolves when the process is asked to stop (SIGINT / SIGTERM). */
  stopSignal: Promise<string>;
  /** How long a stop waits for replies in flight before leaving them in the outbox (default 10 s). */
  stopDeadlineMs?: number;
}

const SNOWFLAKE = /^\d{17,20}$/u;

/**
 * `troupe discord`: the avatars of a file on Discord, on the real runtime with the store, model
 * and speech settings of the environment. Runs until SIGINT or SIGTERM, then stops cleanly: no
 * new messages or commands, replies in flight sent (or left in the outbox for the next start),
 * state written, the gateway closed. Returns the exit code (0 after a clean stop, 2 for a
 * configuration the operator must fix).
 */
export async function runDiscord(options: DiscordCommandOptions): Promise<number> {
  const { stdout, stderr, env } = options;
  const badGuild = options.guildIds.find((g) => !SNOWFLAKE.test(g));
  if (badGuild !== undefined)
    return fail(
      stderr,
      'TROUPE_CONFIG_INVALID',
      `--guild ${JSON.stringify(badGuild)} is not a Discord server id (17 to 20 digits).`,
    );
  let settings: DiscordSettings;
  let avatars: AvatarDefinition[];
  let level: LogLevel;
  try {
    level = logLevelFromEnv(env, 'info');
  } catch (error) {
    if (!ConfigError.isInstance(error)) throw error;
    return fail(stderr, error.code, error.message);
  }
  const logger = createLogger({ level });
  let model: ReturnType<typeof modelFromEnv>;
  let replies: ReturnType<typeof replyFromEnv>;
  try {
    settings = discordFromEnv(env);
    model = modelFromEnv(env, { logger });
    replies = replyFromEnv(env);
  } catch (error) {
    if (!ConfigError.isInstance(error)) throw error;
    return fail(stderr, error.code, error.message);
  }
  try {
    avatars = await loadAvatarsFile(options.avatarsFile);
  } catch (error) {
    if (!isTroupeError(error)) throw error;
    return fail(stderr, error.code, error.message);
  }
  let store: TroupeStore;
  try {
    store = await openDefaultStore(env, { logger });
  } catch (error) {
    if (isTroupeError(error)) return fail(stderr, error.code, error.message);
    throw error;
  }

  // The email inbox, when asked for, on the runtime's store: `troupe email` and `troupe inbox`
  // in other processes see the same interrupts.
  let email: OpenedEmailAssistant | undefined;
  if (settings.inbox) {
    try {
      email = await openEmailAssistant(env, store, logger);
    } catch (error) {
      await store.close();
      if (!isTroupeError(error)) throw error;
      return fail(stderr, error.code, error.message);
    }
  }

  const client = createDiscordClient({
    directMessages: settings.directMessages,
    ...(settings.apiUrl ? { apiUrl: settings.apiUrl } : {}),
  });
  const transport = new DiscordTransport({ client, logger });
  const lookupTool = lazyEntityLookup(env, { logger });
  const runtime = createRuntime({
    avatars,
    config: options.config,
    model: model.model,
    maxReplyChars: replies.maxReplyChars,
    transports: [transport],
    store,
    logger,
    lookup: { tool: lookupTool, composer: { env } },
  });
  // Only the first shard registers commands (they are per application, not per shard).
  const shardIds = client.shard?.ids ?? [0];
  const describeConfig = (): Record<string, string> => ({
    store: store.kind,
    model: model.model.id,
    'max reply chars': String(replies.maxReplyChars),
    'direct messages': String(settings.directMessages),
    'allowed bots': settings.allowBots === 'all' ? 'all' : settings.allowBots.join(', ') || 'none',
    'summon roles': settings.summonRoles.join(', ') || 'everyone',
    'summons per day': settings.summonsPerDay === 0 ? 'no limit' : String(settings.summonsPerDay),
    'email inbox': inboxWhere(settings),
    'inbox roles': settings.inboxRoles.join(', ') || 'Manage Server',
    'REST API': redactCredentials(settings.apiUrl ?? 'https://discord.com/api'),
    shards: client.shard ? `${client.shard.ids.join(',')} of ${client.shard.count}` : 'one process',
    ...Object.fromEntries(Object.entries(options.config).map(([k, v]) => [k, String(v)])),
  });

  let bot: Awaited<ReturnType<typeof startDiscordBot>>;
  try {
    bot = await startDiscordBot({
      token: settings.token,
      client,
      transport,
      runtime,
      avatars: runtime.avatars,
      store,
      commandGuildIds: options.guildIds,
      registerCommands: shardIds.includes(0),
      ...(settings.applicationId ? { applicationId: settings.applicationId } : {}),
      allowBots: settings.allowBots,
      directMessages: settings.directMessages,
      summon: { roles: settings.summonRoles, perDay: settings.summonsPerDay },
      ...(settings.inbox && email
        ? { inbox: { assistant: email.assistant, target: settings.inbox, roles: settings.inboxRoles } }
        : {}),
      describeConfig,
      logger,
    });
  } catch (error) {
    await runtime.stop({ deadlineMs: 0 });
    await store.close();
    await lookupTool.close();
    if (isTroupeError(error)) return fail(stderr, error.code, error.message);
    throw error;
  }

  const names = runtime.avatars.map((a) => (a.emoji ? `${a.emoji} ${a.name}` : a.name)).join(', ');
  stdout(
    `Troupe is on Discord as ${terminalText(bot.user.username)} in ${client.guilds.cache.size} server(s) — avatars: ${terminalText(names)}.\n` +
      `Slash commands: /summon, /dismiss, /avatars, /troupe config (${options.guildIds.length > 0 ? `registered in ${options.guildIds.join(', ')}` : 'registered globally; Discord may take up to an hour to show them'}).\n` +
      `Store: ${store.kind}; model: ${model.model.id}. Ctrl-C stops cleanly.\n` +
      (email ? `Email inbox: interrupts go to ${inboxWhere(settings)} (model: ${email.model}).\n` : '') +
      `Invite it to another server: ${discordInviteUrl(bot.applicationId)}\n`,
  );

  const signal = await options.stopSignal;
  stdout(`Stopping (${signal}): finishing replies in flight…\n`);
  bot.stopListening();
  await bot.whenCommandsIdle();
  await runtime.stop({ deadlineMs: options.stopDeadlineMs ?? 10_000 });
  const left = await store.outbox.unsettled().then(
    (entries) => entries.length,
    () => 0,
  );
  await bot.close();
  await email?.close();
  await store.close();
  await lookupTool.close();
  stdout(left > 0 ? `Stopped; ${left} reply(ies) left in the outbox for the next start.\n` : 'Stopped.\n');
  return 0;
}

/** Where the email inbox posts, for people. */
function inboxWhere(settings: DiscordSettings): string {
  if (!settings.inbox) return 'off';
  return settings.inbox.kind === 'dm'
    ? `DMs of user ${settings.inbox.userId}`
    : `channel ${settings.inbox.channelId}`;
}
