import {
  ApplicationCommandOptionType,
  ApplicationCommandType,
  PermissionFlagsBits,
  type REST,
  Routes,
} from 'discord.js';

/** The slash commands Troupe registers, as Discord's API takes them. */
export const troupeCommands = [
  {
    name: 'summon',
    description:
      'Bring an avatar into this channel (a new name may create one): it greets, then follows the talk.',
    type: ApplicationCommandType.ChatInput,
    dm_permission: false,
    options: [
      {
        name: 'avatar',
        description: 'Who to summon (a name or an id)',
        type: ApplicationCommandOptionType.String,
        required: true,
        autocomplete: true,
      },
    ],
  },
  {
    name: 'dismiss',
    description: 'Send an avatar away from this channel.',
    type: ApplicationCommandType.ChatInput,
    dm_permission: false,
    options: [
      {
        name: 'avatar',
        description: 'Who to dismiss (a name or an id)',
        type: ApplicationCommandOptionType.String,
        required: true,
        autocomplete: true,
      },
    ],
  },
  {
    name: 'forget',
    description: 'Remove an avatar that summoning created, from every channel.',
    type: ApplicationCommandType.ChatInput,
    dm_permission: false,
    // Hidden from members without Manage Server; checked again when used.
    default_member_permissions: PermissionFlagsBits.ManageGuild.toString(),
    options: [
      {
        name: 'avatar',
        description: 'Who to forget (a name or an id)',
        type: ApplicationCommandOptionType.String,
        required: true,
        autocomplete: true,
      },
    ],
  },
  {
    name: 'avatars',
    description: 'Who is here: summon turns left, cooldowns, open threads.',
    type: ApplicationCommandType.ChatInput,
    dm_permission: false,
  },
  {
    name: 'troupe',
    description: 'Troupe administration.',
    type: ApplicationCommandType.ChatInput,
    dm_permission: false,
    // Hidden from members without Manage Server; checked again when used.
    default_member_permissions: PermissionFlagsBits.ManageGuild.toString(),
    options: [
      {
        name: 'config',
        description: 'The effective settings (secrets masked).',
        type: ApplicationCommandOptionType.Subcommand,
      },
      {
        name: 'usage',
        description: "Today's model calls, tokens and estimated cost per avatar, and the daily caps (UTC).",
        type: ApplicationCommandOptionType.Subcommand,
      },
    ],
  },
] as const;

/**
 * Registers the commands, replacing the application's previous set: per guild (instant) for each
 * id given, else globally (Discord may take up to an hour to show global changes).
 */
export async function registerCommands(
  rest: REST,
  applicationId: string,
  guildIds: readonly string[],
): Promise<void> {
  const body = troupeCommands as unknown as Record<string, unknown>[];
  if (guildIds.length === 0) {
    await rest.put(Routes.applicationCommands(applicationId), { body });
    return;
  }
  for (const guildId of guildIds)
    await rest.put(Routes.applicationGuildCommands(applicationId, guildId), { body });
}
