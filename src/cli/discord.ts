import type { AvatarDefinition } from '../actors/avatarDefinition.js';
import { systemClock } from '../actors/clock.js';
import { dayUsageLines, dayUsageOf } from '../actors/usage/dayUsage.js';
import { ledgerSpendGate } from '../actors/usage/spendGate.js';
import type { UsageLedger } from '../actors/usage/usageLedger.js';
import { startDiscordBot } from '../adapters/discord/discordBot.js';
import { createDiscordClient } from '../adapters/discord/discordClient.js';
import { discordInviteUrl } from '../adapters/discord/discordInvite.js';
import { type DiscordSettings, discordFromEnv } from '../adapters/discord/discordSettings.js';
import { DiscordTransport } from '../adapters/discord/discordTransport.js';
import { type ModelFromEnv, modelFromEnv } from '../adapters/llm/modelFromEnv.js';
import { lazyEntityLookup } from '../adapters/sql/lazyEntityLookup.js';
import { openDefaultStore } from '../adapters/store/storeFromEnv.js';
import { type AvatarCreationSettings, avatarCreationFromEnv } from '../config/avatarCreationSettings.js';
import { ConfigError } from '../config/configError.js';
import type { CoordinationConfig } from '../config/coordinationConfig.js';
import { replyFromEnv } from '../config/replySettings.js';
import { createRuntime } from '../createRuntime.js';
import { terminalText } from '../delivery/terminalText.js';
import { createLogger } from '../logging/logger.js';
import { logLevelFromEnv } from '../logging/logLevel.js';
import { redactCredentials } from '../ports/redactCredentials.js';
import type { TroupeStore } from '../ports/store.js';
import { isTroupeError } from '../ports/troupeError.js';
import { type AttachedStudio, attachStudio } from '../studio/attachStudio.js';
import { avatarCreationOf } from './avatarCreationOf.js';
import { avatarModelProblem } from './avatarModelCheck.js';
import { loadAvatarsFile } from './avatarsFile.js';
import { fail, readOrFail } from './fail.js';
import { type OpenedEmailAssistant, openEmailAssistant } from './openEmailAssistant.js';
import { usageLedgerFromEnv } from './usageFromEnv.js';

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
  /**
   * Serve the studio from this process over the bot's own runtime (127.0.0.1, any free port, a
   * fresh token; the URL is printed). Its playground only watches: it never posts into Discord.
   */
  studio?: boolean;
}

const SNOWFLAKE = /^\d{17,20}$/u;

/** What `troupe discord` read from its surroundings before it connects. */
interface DiscordSetup {
  settings: DiscordSettings;
  avatars: AvatarDefinition[];
  logger: ReturnType<typeof createLogger>;
  model: ReturnType<typeof modelFromEnv>;
  replies: ReturnType<typeof replyFromEnv>;
  /** Whether `/summon` creates avatars nobody has (off unless `TROUPE_SUMMON_CREATES` is set). */
  creation: AvatarCreationSettings;
  store: TroupeStore;
  email: OpenedEmailAssistant | undefined;
  /** Where model calls are counted: the runtime's turns and the inbox's calls alike. */
  usage: UsageLedger;
}

/** The parts of a running `troupe discord`. */
interface DiscordSession extends DiscordSetup {
  client: ReturnType<typeof createDiscordClient>;
  transport: DiscordTransport;
  lookupTool: ReturnType<typeof lazyEntityLookup>;
  runtime: ReturnType<typeof createRuntime>;
}

/**
 * `troupe discord`: the avatars of a file on Discord, on the real runtime with the store, model
 * and speech settings of the environment. Runs until SIGINT or SIGTERM, then stops cleanly: no
 * new messages or commands, replies in flight sent (or left in the outbox for the next start),
 * state written, the gateway closed. Returns the exit code (0 after a clean stop, 2 for a
 * configuration the operator must fix).
 */
export async function runDiscord(options: DiscordCommandOptions): Promise<number> {
  const setup = await readDiscordSetup(options);
  if (typeof setup === 'number') return setup;
  const session = wireDiscordSession(options, setup);
  let bot: Awaited<ReturnType<typeof startDiscordBot>>;
  try {
    bot = await startBot(options, session);
  } catch (error) {
    await session.runtime.stop({ deadlineMs: 0 });
    await session.store.close();
    await session.lookupTool.close();
    if (isTroupeError(error)) return fail(options.stderr, error.code, error.message);
    throw error;
  }
  options.stdout(welcome(options, session, bot));
  const studio = options.studio ? await serveDiscordStudio(options, session) : undefined;
  const signal = await options.stopSignal;
  options.stdout(`Stopping (${signal}): finishing replies in flight…\n`);
  await studio?.close();
  const left = await stopDiscordSession(options, session, bot);
  options.stdout(
    left > 0 ? `Stopped; ${left} reply(ies) left in the outbox for the next start.\n` : 'Stopped.\n',
  );
  return 0;
}

/**
 * `--studio`: the studio over this bot's runtime (its live actors) and its email inbox, if any. On
 * 127.0.0.1 with a fresh token; the playground only watches, so nothing is posted into Discord.
 */
async function serveDiscordStudio(
  options: DiscordCommandOptions,
  session: DiscordSession,
): Promise<AttachedStudio> {
  const studio = await attachStudio({
    runtime: session.runtime,
    ...(session.email ? { assistant: session.email.assistant } : {}),
    clock: systemClock,
    logger: session.logger,
    config: options.config,
    host: '127.0.0.1',
    port: 0,
  });
  const shard = session.client.shard ? ` (shard ${session.client.shard.ids.join(',')})` : '';
  options.stdout(`Troupe Studio${shard}: ${studio.server.url}#token=${studio.server.token}\n`);
  return studio;
}

/** The settings, avatars, store and email inbox, or the exit code of what the operator must fix. */
async function readDiscordSetup(options: DiscordCommandOptions): Promise<DiscordSetup | number> {
  const { stderr, env } = options;
  const badGuild = options.guildIds.find((g) => !SNOWFLAKE.test(g));
  if (badGuild !== undefined)
    return fail(
      stderr,
      'TROUPE_CONFIG_INVALID',
      `--guild ${JSON.stringify(badGuild)} is not a Discord server id (17 to 20 digits).`,
    );
  const level = await readOrFail(
    stderr,
    () => ({ level: logLevelFromEnv(env, 'info') }),
    ConfigError.isInstance,
  );
  if (typeof level === 'number') return level;
  const logger = createLogger(level);
  const read = await readOrFail(
    stderr,
    () => ({
      settings: discordFromEnv(env),
      model: modelFromEnv(env, { logger }),
      replies: replyFromEnv(env),
      creation: avatarCreationFromEnv(env, false),
    }),
    ConfigError.isInstance,
  );
  if (typeof read === 'number') return read;
  const { settings, model, replies, creation } = read;
  const opened = await openAvatarsAndStore(options, logger, settings, model);
  if (typeof opened === 'number') return opened;
  return { settings, logger, model, replies, creation, ...opened };
}

/** The avatars file, the store and (when asked for) the email inbox on that store. */
async function openAvatarsAndStore(
  options: DiscordCommandOptions,
  logger: ReturnType<typeof createLogger>,
  settings: DiscordSettings,
  model: ModelFromEnv,
): Promise<Pick<DiscordSetup, 'avatars' | 'store' | 'email' | 'usage'> | number> {
  const { stderr, env } = options;
  const avatars = await readOrFail(stderr, () => loadAvatarsFile(options.avatarsFile));
  if (typeof avatars === 'number') return avatars;
  const modelProblem = avatarModelProblem(avatars, model);
  if (modelProblem) return fail(stderr, modelProblem.code, modelProblem.message);
  let store: TroupeStore;
  try {
    store = await openDefaultStore(env, { logger });
  } catch (error) {
    if (isTroupeError(error)) return fail(stderr, error.code, error.message);
    throw error;
  }
  const usage = await readOrFail(stderr, () => usageLedgerFromEnv(env, store, logger));
  if (typeof usage === 'number') {
    await store.close();
    return usage;
  }
  // The email inbox, when asked for, on the runtime's store: `troupe email` and `troupe inbox`
  // in other processes see the same interrupts.
  let email: OpenedEmailAssistant | undefined;
  if (settings.inbox) {
    try {
      email = await openEmailAssistant(env, store, logger, usage);
    } catch (error) {
      await store.close();
      if (!isTroupeError(error)) throw error;
      return fail(stderr, error.code, error.message);
    }
  }
  return { avatars, store, email, usage };
}

/** The Discord client, its transport and the runtime on them. */
function wireDiscordSession(options: DiscordCommandOptions, setup: DiscordSetup): DiscordSession {
  const { settings, logger } = setup;
  const client = createDiscordClient({
    directMessages: settings.directMessages,
    ...(settings.apiUrl ? { apiUrl: settings.apiUrl } : {}),
  });
  const transport = new DiscordTransport({ client, logger });
  const lookupTool = lazyEntityLookup(options.env, { logger });
  const runtime = createRuntime({
    avatars: setup.avatars,
    config: options.config,
    model: setup.model.model,
    models: setup.model.models,
    maxReplyChars: setup.replies.maxReplyChars,
    transports: [transport],
    store: setup.store,
    usage: setup.usage,
    logger,
    lookup: { tool: lookupTool, composer: { env: options.env } },
    avatarCreation: avatarCreationOf(setup.creation, setup.model, logger),
  });
  return { ...setup, client, transport, lookupTool, runtime };
}

/** Logs the bot in and registers its commands (only the first shard: they are per application). */
function startBot(options: DiscordCommandOptions, session: DiscordSession) {
  const { settings, client, email } = session;
  const shardIds = client.shard?.ids ?? [0];
  return startDiscordBot({
    token: settings.token,
    client,
    transport: session.transport,
    runtime: session.runtime,
    avatars: () => session.runtime.avatars,
    store: session.store,
    commandGuildIds: options.guildIds,
    registerCommands: shardIds.includes(0),
    ...(settings.applicationId ? { applicationId: settings.applicationId } : {}),
    allowBots: settings.allowBots,
    directMessages: settings.directMessages,
    summon: { roles: settings.summonRoles, perDay: settings.summonsPerDay },
    ...(settings.inbox && email
      ? { inbox: { assistant: email.assistant, target: settings.inbox, roles: settings.inboxRoles } }
      : {}),
    describeConfig: () => describeDiscordConfig(options, session),
    describeUsage: () => describeDiscordUsage(options, session),
    cappedBy: cappedByOf(options, session),
    logger: session.logger,
  });
}

/** What `/troupe usage` shows: the UTC day of every avatar with its caps, as `troupe usage` counts it. */
function describeDiscordUsage(options: DiscordCommandOptions, session: DiscordSession): string[] {
  const ledger = session.runtime.usage;
  if (!ledger) return ['This bot records no usage.'];
  return dayUsageLines(dayUsageOf(ledger, options.config, session.runtime.avatars, Date.now()));
}

/** Why a daily cap keeps the avatar quiet now, for `/avatars` (undefined when none does). */
function cappedByOf(
  options: DiscordCommandOptions,
  session: DiscordSession,
): (avatarId: string) => string | undefined {
  const ledger = session.runtime.usage;
  if (!ledger) return () => undefined;
  // The floors' own gate over the ledger: the reason /avatars gives is the one that stops the turn.
  const gate = ledgerSpendGate(
    ledger,
    options.config,
    new Map(session.runtime.avatars.map((a) => [a.id, a])),
  );
  return (avatarId) => {
    const block = gate(avatarId, Date.now());
    return block ? `${block.reason} (${block.detail})` : undefined;
  };
}

/** What `/troupe config` shows: the settings in force, credentials redacted. */
function describeDiscordConfig(
  options: DiscordCommandOptions,
  session: DiscordSession,
): Record<string, string> {
  const { settings, client } = session;
  return {
    store: session.store.kind,
    model: session.model.model.id,
    'avatar models':
      session.runtime.avatars
        .filter((a) => session.runtime.modelOf(a.id) !== session.model.model)
        .map((a) => `${a.name}: ${session.runtime.modelOf(a.id).id}`)
        .join(', ') || 'none (all use the model)',
    'max reply chars': String(session.replies.maxReplyChars),
    'direct messages': String(settings.directMessages),
    'allowed bots': settings.allowBots === 'all' ? 'all' : settings.allowBots.join(', ') || 'none',
    'summon roles': settings.summonRoles.join(', ') || 'everyone',
    'summons per day': settings.summonsPerDay === 0 ? 'no limit' : String(settings.summonsPerDay),
    'summon creates': session.creation.enabled
      ? `yes, ${session.creation.perPersonPerDay === 0 ? 'no limit' : `${session.creation.perPersonPerDay} per person per day`}`
      : 'no',
    'email inbox': inboxWhere(settings),
    'inbox roles': settings.inboxRoles.join(', ') || 'Manage Server',
    'REST API': redactCredentials(settings.apiUrl ?? 'https://discord.com/api'),
    shards: client.shard ? `${client.shard.ids.join(',')} of ${client.shard.count}` : 'one process',
    ...Object.fromEntries(Object.entries(options.config).map(([k, v]) => [k, String(v)])),
  };
}

/** What the operator reads once the bot is on: where it is, its commands, how to invite it. */
function welcome(
  options: DiscordCommandOptions,
  session: DiscordSession,
  bot: Awaited<ReturnType<typeof startDiscordBot>>,
): string {
  const { runtime, email, settings } = session;
  const names = runtime.avatars.map((a) => (a.emoji ? `${a.emoji} ${a.name}` : a.name)).join(', ');
  return (
    `Troupe is on Discord as ${terminalText(bot.user.username)} in ${session.client.guilds.cache.size} server(s) — avatars: ${terminalText(names)}.\n` +
    `Slash commands: /summon, /dismiss, /avatars, /troupe config (${options.guildIds.length > 0 ? `registered in ${options.guildIds.join(', ')}` : 'registered globally; Discord may take up to an hour to show them'}).\n` +
    `Store: ${session.store.kind}; model: ${session.model.model.id}. Ctrl-C stops cleanly.\n` +
    (email ? `Email inbox: interrupts go to ${inboxWhere(settings)} (model: ${email.model}).\n` : '') +
    `Invite it to another server: ${discordInviteUrl(bot.applicationId)}\n`
  );
}

/** Stops taking work, lets replies in flight finish, closes everything; the replies left over. */
async function stopDiscordSession(
  options: DiscordCommandOptions,
  session: DiscordSession,
  bot: Awaited<ReturnType<typeof startDiscordBot>>,
): Promise<number> {
  bot.stopListening();
  await bot.whenCommandsIdle();
  await session.runtime.stop({ deadlineMs: options.stopDeadlineMs ?? 10_000 });
  const left = await session.store.outbox.unsettled().then(
    (entries) => entries.length,
    () => 0,
  );
  await bot.close();
  await session.email?.close();
  await session.store.close();
  await session.lookupTool.close();
  return left;
}

/** Where the email inbox posts, for people. */
function inboxWhere(settings: DiscordSettings): string {
  if (!settings.inbox) return 'off';
  return settings.inbox.kind === 'dm'
    ? `DMs of user ${settings.inbox.userId}`
    : `channel ${settings.inbox.channelId}`;
}
