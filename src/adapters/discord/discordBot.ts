import { type Client, DiscordAPIError, Events, type Interaction } from 'discord.js';
import type { Observable, Subscription } from 'rxjs';
import { type Logger, silentLogger } from '../../logging/logger.js';
import type { TroupeStore } from '../../ports/store.js';
import { TroupeError } from '../../ports/troupeError.js';
import {
  DiscordCommandHandler,
  type DiscordRuntimeHandle,
  type SummonRules,
} from './discordCommandHandler.js';
import { registerCommands } from './discordCommands.js';
import { type DiscordAvatars, discordMessageEvents } from './discordInbound.js';
import { DiscordInbox } from './discordInbox.js';
import type { DiscordInboxTarget } from './discordSettings.js';
import type { DiscordTransport } from './discordTransport.js';
import type { InboxAssistant } from './inboxAssistant.js';

/** How {@link startDiscordBot} runs a bot. */
export interface DiscordBotOptions {
  /** The bot token (never logged). */
  token: string;
  /** A client from `createDiscordClient`, not logged in yet. */
  client: Client;
  /** The transport the runtime was created with (`new DiscordTransport({ client })`). */
  transport: DiscordTransport;
  /** The runtime (a Troupe `Runtime`): the bot feeds it and answers commands with it. */
  runtime: DiscordRuntimeHandle & { connect(events$: Observable<unknown>): Subscription };
  /** The avatars, or a function giving them as they are now (`() => runtime.avatars`: summoning may create some). */
  avatars: DiscordAvatars;
  /** For the summon limit and interaction de-duplication (the runtime's store). */
  store: Pick<TroupeStore, 'documents' | 'processed'>;
  /** Register the slash commands in these guilds (instant), or globally when empty. Default: global. */
  commandGuildIds?: readonly string[];
  /** Skip command registration (another shard or a deploy step does it). */
  registerCommands?: boolean;
  /** Checked against the application the token belongs to, when given. */
  applicationId?: string;
  /** Other bots whose messages count (`'all'` or user ids). Default none. */
  allowBots?: 'all' | readonly string[];
  /**
   * Messages from allowed bots the avatars hear in a channel after a person's message (default
   * 3); then they wait for a person, so two bots cannot talk forever.
   */
  botMessagesPerPerson?: number;
  directMessages?: boolean;
  /** Who may summon and how often. Default: everyone, 20 a day. */
  summon?: Partial<SummonRules>;
  /** Effective settings for `/troupe config`, secrets masked. */
  describeConfig?: () => Record<string, string>;
  /** Today's usage per avatar with the caps, as lines, for `/troupe usage`. */
  describeUsage?: () => string[];
  /** Why a daily cap keeps an avatar quiet now, for `/avatars`. */
  cappedBy?: (avatarId: string) => string | undefined;
  /** How long `/summon` waits for the greeting before it answers anyway (default 20 s). */
  greetingTimeoutMs?: number;
  /** Epoch ms, for the daily summon limit (default `Date.now`; tests pass their clock). */
  now?: () => number;
  /** How long login may take before it is an error (default 30 s). */
  loginTimeoutMs?: number;
  /**
   * Called when Discord closes the gateway for good while the bot runs (the token was reset, the
   * Message Content intent turned off): the bot hears nothing more, so the caller should stop.
   * The error is also logged.
   */
  onGatewayLost?: (error: TroupeError) => void;
  /**
   * The email assistant's inbox on Discord: its interrupts are posted to `target` with buttons
   * (see {@link DiscordInbox}). Unset: no inbox.
   */
  inbox?: {
    assistant: InboxAssistant;
    target: DiscordInboxTarget;
    /** Who may answer in a channel (role ids or names); empty: Manage Server. */
    roles?: readonly string[];
    /** How often the inbox is read (default 5 s). */
    pollMs?: number;
  };
  logger?: Logger;
}

/** A running bot. */
export interface DiscordBot {
  /** The bot user's id and name. */
  readonly user: { id: string; username: string };
  readonly applicationId: string;
  /** The email inbox, when one was asked for. */
  readonly inbox?: DiscordInbox;
  /** Stops taking messages and commands (work already taken goes on); for a clean stop. */
  stopListening(): void;
  /** Resolves when no slash command is being answered. */
  whenCommandsIdle(): Promise<void>;
  /** Closes the gateway connection. Stop the runtime first so its sends drain. */
  close(): Promise<void>;
}

const DEFAULT_SUMMONS_PER_DAY = 20;

/**
 * Connects a runtime to Discord: the client's messages become the runtime's events (through
 * `runtime.connect`), slash commands are registered and answered, and the client logs in. Login
 * failures the operator must fix come back at once as typed errors rather than a retry loop.
 *
 * @throws TroupeError `TROUPE_DISCORD_TOKEN_INVALID` (Discord refused the token),
 *   `TROUPE_DISCORD_INTENT_MISSING` (the Message Content intent is not enabled for the app),
 *   `TROUPE_DISCORD_LOGIN_FAILED` (Discord unreachable, login timed out, or the token belongs to
 *   another application than `applicationId`).
 */
export async function startDiscordBot(options: DiscordBotOptions): Promise<DiscordBot> {
  const { client, runtime, transport } = options;
  const log = options.logger ?? silentLogger();
  const inbound = runtime.connect(
    discordMessageEvents({
      client,
      avatars: options.avatars,
      webhooks: transport.webhooks,
      memory: transport.memory,
      ...(options.allowBots !== undefined ? { allowBots: options.allowBots } : {}),
      ...(options.botMessagesPerPerson !== undefined
        ? { botMessagesPerPerson: options.botMessagesPerPerson }
        : {}),
      ...(options.directMessages !== undefined ? { directMessages: options.directMessages } : {}),
      logger: log,
    }),
  );
  const handler = commandHandlerFor(options, log);
  const inbox = inboxFor(options, log);
  const answering = new Set<Promise<void>>();
  let listening = true;
  const onInteraction = (interaction: Interaction) => {
    if (!listening) return;
    const work =
      inbox && DiscordInbox.owns(interaction) ? inbox.handle(interaction) : handler.handle(interaction);
    answering.add(work);
    void work.finally(() => answering.delete(work));
  };
  client.on(Events.InteractionCreate, onInteraction);
  // Registered after login: during login the same close is login's error.
  const onLost = (event: { code: number }, shardId: number) => {
    if (!listening) return;
    const error = closeError(event.code, 'while the bot was running; it will not reconnect');
    log.error({ code: error.code, closeCode: event.code, shardId }, error.message);
    options.onGatewayLost?.(error);
  };
  const stopListening = () => {
    listening = false;
    client.off(Events.ShardDisconnect, onLost);
    handler.stopWaiting();
    inbox?.stop();
    inbound.unsubscribe();
    client.off(Events.InteractionCreate, onInteraction);
  };

  const { user, applicationId } = await loginAs(options, stopListening);
  log.info({ user: user.username, applicationId, guilds: client.guilds.cache.size }, 'connected to Discord');
  client.on(Events.ShardDisconnect, onLost);
  if (options.registerCommands !== false) await registerSlashCommands(options, applicationId, log);

  inbox?.start();

  return {
    user: { id: user.id, username: user.username },
    applicationId,
    ...(inbox ? { inbox } : {}),
    stopListening,
    async whenCommandsIdle() {
      while (answering.size > 0) await Promise.allSettled([...answering]);
      await inbox?.whenIdle();
    },
    async close() {
      stopListening();
      await inbox?.whenIdle();
      await client.destroy();
    },
  };
}

/** The slash commands' handler: summon, dismiss, forget, avatars, config, usage. */
function commandHandlerFor(options: DiscordBotOptions, log: Logger): DiscordCommandHandler {
  return new DiscordCommandHandler({
    client: options.client,
    runtime: options.runtime,
    avatars: options.avatars,
    store: options.store,
    transport: options.transport,
    summon: { roles: options.summon?.roles ?? [], perDay: options.summon?.perDay ?? DEFAULT_SUMMONS_PER_DAY },
    ...(options.describeConfig ? { describeConfig: options.describeConfig } : {}),
    ...(options.describeUsage ? { describeUsage: options.describeUsage } : {}),
    ...(options.cappedBy ? { cappedBy: options.cappedBy } : {}),
    ...(options.now ? { now: options.now } : {}),
    ...(options.greetingTimeoutMs !== undefined ? { greetingTimeoutMs: options.greetingTimeoutMs } : {}),
    logger: log,
  });
}

/** The email inbox on Discord, when one was asked for. */
function inboxFor(options: DiscordBotOptions, log: Logger): DiscordInbox | undefined {
  if (!options.inbox) return undefined;
  return new DiscordInbox({
    client: options.client,
    assistant: options.inbox.assistant,
    store: options.store,
    target: options.inbox.target,
    ...(options.inbox.roles ? { roles: options.inbox.roles } : {}),
    ...(options.inbox.pollMs !== undefined ? { pollMs: options.inbox.pollMs } : {}),
    ...(options.now ? { now: options.now } : {}),
    logger: log,
  });
}

/**
 * Logs in and says who the bot is; on failure stops listening and destroys the client first.
 * @throws TroupeError as {@link startDiscordBot} says.
 */
async function loginAs(
  options: DiscordBotOptions,
  stopListening: () => void,
): Promise<{ user: { id: string; username: string }; applicationId: string }> {
  const { client } = options;
  try {
    await login(client, options.token, options.loginTimeoutMs ?? 30_000);
  } catch (error) {
    stopListening();
    await client.destroy().catch(() => undefined);
    throw error;
  }
  const user = client.user;
  const applicationId = client.application?.id ?? user?.id;
  if (!user || !applicationId) {
    stopListening();
    await client.destroy();
    throw new TroupeError('TROUPE_DISCORD_LOGIN_FAILED', 'Discord did not say who the bot is after login.');
  }
  if (options.applicationId !== undefined && options.applicationId !== applicationId) {
    stopListening();
    await client.destroy();
    throw new TroupeError(
      'TROUPE_DISCORD_LOGIN_FAILED',
      `DISCORD_APPLICATION_ID is ${options.applicationId}, but the token belongs to application ${applicationId}. Use the Application ID shown on the same app's General Information page, or leave it unset.`,
    );
  }
  return { user, applicationId };
}

/** Registers the slash commands; a failure is logged with its fix, and the bot still talks. */
async function registerSlashCommands(
  options: DiscordBotOptions,
  applicationId: string,
  log: Logger,
): Promise<void> {
  const guilds = options.commandGuildIds ?? [];
  try {
    await registerCommands(options.client.rest, applicationId, guilds);
    log.info({ scope: guilds.length > 0 ? guilds : 'global' }, 'slash commands registered');
  } catch (error) {
    log.error(
      { err: error, status: error instanceof DiscordAPIError ? error.status : undefined },
      'could not register the slash commands: invite the bot with the applications.commands scope (see the README), and check --guild ids',
    );
  }
}

/**
 * Logs in, turning what the operator must fix into one typed error, fast: a refused token (401 on
 * the gateway lookup, or close 4004), a privileged intent not enabled (close 4014), or no READY
 * within the timeout.
 */
async function login(client: Client, token: string, timeoutMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  let onDisconnect: ((event: { code: number }) => void) | undefined;
  let onReady: (() => void) | undefined;
  try {
    await new Promise<void>((resolve, reject) => {
      onDisconnect = (event: { code: number }) => reject(closeError(event.code));
      onReady = () => resolve();
      client.once(Events.ShardDisconnect, onDisconnect);
      client.once(Events.ClientReady, onReady);
      timer = setTimeout(
        () =>
          reject(
            new TroupeError(
              'TROUPE_DISCORD_LOGIN_FAILED',
              `Discord did not get ready within ${Math.round(timeoutMs / 1000)} s. Check the network (and DISCORD_API_URL if set).`,
            ),
          ),
        timeoutMs,
      );
      client.login(token).catch((error: unknown) => reject(loginError(error)));
    });
  } finally {
    if (timer) clearTimeout(timer);
    if (onDisconnect) client.off(Events.ShardDisconnect, onDisconnect);
    if (onReady) client.off(Events.ClientReady, onReady);
  }
}

const TOKEN_HELP =
  'Copy the token again from the Discord Developer Portal (your application → Bot → Reset Token) into DISCORD_TOKEN.';
const INTENT_HELP =
  'Enable "Message Content Intent" in the Discord Developer Portal (your application → Bot → Privileged Gateway Intents), then start again.';

function closeError(code: number, when = 'during login'): TroupeError {
  if (code === 4004)
    return new TroupeError(
      'TROUPE_DISCORD_TOKEN_INVALID',
      `Discord refused the bot token (close 4004) ${when}. ${TOKEN_HELP}`,
    );
  if (code === 4014)
    return new TroupeError(
      'TROUPE_DISCORD_INTENT_MISSING',
      `Discord refused the Message Content intent (close 4014) ${when}. ${INTENT_HELP}`,
    );
  return new TroupeError(
    'TROUPE_DISCORD_LOGIN_FAILED',
    `Discord closed the connection ${when} (close ${code}).`,
    {
      details: { closeCode: code },
    },
  );
}

function loginError(error: unknown): TroupeError {
  if (TroupeError.isInstance(error)) return error;
  const code = (error as { code?: unknown }).code;
  const message = error instanceof Error ? error.message : String(error);
  if (
    code === 'TokenInvalid' ||
    (error instanceof DiscordAPIError && error.status === 401) ||
    /Authentication failed/u.test(message)
  )
    return new TroupeError('TROUPE_DISCORD_TOKEN_INVALID', `Discord refused the bot token. ${TOKEN_HELP}`, {
      cause: error,
    });
  if (/disallowed intents/iu.test(message))
    return new TroupeError(
      'TROUPE_DISCORD_INTENT_MISSING',
      `Discord refused the Message Content intent. ${INTENT_HELP}`,
      {
        cause: error,
      },
    );
  return new TroupeError('TROUPE_DISCORD_LOGIN_FAILED', `Could not log in to Discord: ${message}`, {
    cause: error,
  });
}
