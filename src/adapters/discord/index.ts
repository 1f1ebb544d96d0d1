/**
 * Troupe on Discord (discord.js 14): `createDiscordClient`, the `DiscordTransport` avatars speak
 * through (channel webhooks), and `startDiscordBot`, which feeds a runtime from the gateway and
 * answers the slash commands.
 *
 * @example
 * ```ts
 * const client = createDiscordClient();
 * const transport = new DiscordTransport({ client, logger });
 * const runtime = createRuntime({ avatars, transports: [transport], store });
 * const bot = await startDiscordBot({ token, client, transport, runtime, avatars, store: runtime.store });
 * // later
 * bot.stopListening(); await runtime.stop(); await bot.close();
 * ```
 * @packageDocumentation
 */
export { type DiscordBot, type DiscordBotOptions, startDiscordBot } from './discordBot.js';
export { createDiscordClient, type DiscordClientOptions } from './discordClient.js';
export {
  DiscordCommandHandler,
  type DiscordCommandHandlerOptions,
  type DiscordRuntimeHandle,
  type SummonRules,
} from './discordCommandHandler.js';
export { registerCommands, troupeCommands } from './discordCommands.js';
export {
  avatarsNow,
  type DiscordAvatar,
  type DiscordAvatars,
  type DiscordChannelMessageEvent,
  type DiscordInboundOptions,
  DiscordMessageConverter,
  discordMessageEvents,
} from './discordInbound.js';
export { DiscordInbox, type DiscordInboxOptions } from './discordInbox.js';
export { DISCORD_BOT_PERMISSIONS, discordInviteUrl } from './discordInvite.js';
export { DiscordMessageMemory, type RememberedMessage } from './discordMessageMemory.js';
export {
  type DiscordInboxTarget,
  type DiscordSettings,
  discordFromEnv,
  discordSettings,
  discordSettingsFromEnv,
} from './discordSettings.js';
export {
  type ChannelProblem,
  DISCORD_MAX_MESSAGE,
  DiscordTransport,
  type DiscordTransportOptions,
} from './discordTransport.js';
export { DiscordWebhooks, type WebhookRef } from './discordWebhooks.js';
export type { InboxAssistant, InboxEmail, InboxEntry } from './inboxAssistant.js';
export { replyQuote } from './replyQuote.js';
export { webhookUsername } from './webhookUsername.js';
