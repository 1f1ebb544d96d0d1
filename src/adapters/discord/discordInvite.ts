import { OAuth2Scopes, PermissionFlagsBits } from 'discord.js';

/**
 * What the bot needs in a channel, and nothing more: see channels and read their history (to
 * quote and to check for a part already posted), send (in threads too), attach audio and show
 * link previews, and manage webhooks (one per channel, through which the avatars speak).
 */
export const DISCORD_BOT_PERMISSIONS =
  PermissionFlagsBits.ViewChannel |
  PermissionFlagsBits.SendMessages |
  PermissionFlagsBits.SendMessagesInThreads |
  PermissionFlagsBits.EmbedLinks |
  PermissionFlagsBits.AttachFiles |
  PermissionFlagsBits.ReadMessageHistory |
  PermissionFlagsBits.ManageWebhooks;

/** The link that adds the bot to a server with those permissions and its slash commands. */
export function discordInviteUrl(applicationId: string): string {
  const query = new URLSearchParams({
    client_id: applicationId,
    scope: [OAuth2Scopes.Bot, OAuth2Scopes.ApplicationsCommands].join(' '),
    permissions: DISCORD_BOT_PERMISSIONS.toString(),
  });
  return `https://discord.com/oauth2/authorize?${query.toString().replace(/\+/gu, '%20')}`;
}
