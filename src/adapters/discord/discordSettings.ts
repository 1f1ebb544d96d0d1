import { z } from 'zod';
import { commaList, count, flag, HTTP_URL_WITHOUT_CREDENTIALS } from '../../config/settingSchemas.js';
import { defineSettings, type EnvRecord, settingsFromEnv } from '../../config/settings.js';

/** Where the email assistant's interrupts are posted on Discord. */
export type DiscordInboxTarget = { kind: 'channel'; channelId: string } | { kind: 'dm'; userId: string };

/** The Discord settings, parsed. */
export interface DiscordSettings {
  token: string;
  applicationId?: string;
  apiUrl?: string;
  directMessages: boolean;
  allowBots: 'all' | string[];
  summonRoles: string[];
  summonsPerDay: number;
  /** Where interrupts are posted, when the Discord inbox is on. */
  inbox?: DiscordInboxTarget;
  /** Who may answer the inbox in a channel (role ids or names); empty: Manage Server. */
  inboxRoles: string[];
}

const SNOWFLAKE = /^\d{17,20}$/u;
const ROLES = 'comma-separated role ids or names of at most 100 characters';
const roles = z
  .string()
  .transform((raw) => commaList(raw).map((r) => r.replace(/^@/u, '')))
  .refine((names) => names.every((r) => r.length <= 100), { message: ROLES });

/** The environment variables of `troupe discord`, with defaults and docs (the README's table). */
export const discordSettings = defineSettings({
  DISCORD_TOKEN: {
    key: 'token',
    schema: z.string().refine((t) => !/\s/u.test(t) && !t.toLowerCase().startsWith('bot '), {
      message: 'the token alone, without "Bot " in front and without spaces',
    }),
    required: 'the bot token from the Discord Developer Portal (Bot → Reset Token)',
    secret: true,
    shown: 'required',
    doc: 'The bot token (Developer Portal → your application → Bot → Reset Token). Never logged or shown.',
  },
  DISCORD_APPLICATION_ID: {
    key: 'applicationId',
    schema: z
      .string()
      .regex(
        SNOWFLAKE,
        'a Discord id (17 to 20 digits), as shown on the application’s General Information page',
      ),
    shown: 'from the token',
    doc: 'The application id; when set, start-up checks that the token belongs to it.',
  },
  DISCORD_API_URL: {
    key: 'apiUrl',
    schema: z
      .string()
      .regex(HTTP_URL_WITHOUT_CREDENTIALS, 'an http(s) URL without credentials, e.g. https://discord.com/api')
      // discord.js appends `/v10`: a trailing slash would make `//v10`.
      .transform((url) => url.replace(/\/+$/u, '')),
    shown: 'https://discord.com/api',
    doc: 'REST base URL (a REST proxy, or a fake in tests); discord.js adds the version. The gateway URL still comes from `GET /gateway/bot`.',
  },
  TROUPE_DISCORD_DMS: {
    key: 'directMessages',
    schema: flag,
    default: false,
    doc: 'Answer direct messages to the bot (adds the DM intent); in a DM the bot speaks, the avatar named in bold.',
  },
  TROUPE_DISCORD_ALLOW_BOTS: {
    key: 'allowBots',
    schema: z
      .string()
      .transform(commaList)
      .refine(
        (ids) =>
          (ids.length === 1 && ids[0]?.toLowerCase() === 'all') || ids.every((id) => SNOWFLAKE.test(id)),
        { message: 'comma-separated bot user ids (17 to 20 digits), or all' },
      )
      .transform((ids): 'all' | string[] =>
        ids.length === 1 && ids[0]?.toLowerCase() === 'all' ? 'all' : ids,
      ),
    default: [] as 'all' | string[],
    shown: 'none',
    doc: 'Other bots (and webhooks) whose messages the avatars hear: comma-separated user ids, or `all`. The avatars’ own messages are never answered.',
  },
  TROUPE_DISCORD_SUMMON_ROLES: {
    key: 'summonRoles',
    schema: roles,
    default: [] as string[],
    shown: 'everyone',
    doc: 'Who may use /summon: comma-separated role ids or role names (any case).',
  },
  TROUPE_DISCORD_SUMMONS_PER_DAY: {
    key: 'summonsPerDay',
    schema: count(0, 10_000),
    default: 20,
    doc: 'Summons per person per day (UTC), 0 to 10000 (0: no limit); the person is told the limit when they reach it.',
  },
  TROUPE_DISCORD_INBOX: {
    key: 'inbox',
    schema: z
      .string()
      .regex(
        /^(\d{17,20}|dm:\d{17,20})$/iu,
        'a channel id (17 to 20 digits; Developer Mode → right-click the channel → Copy Channel ID), or dm:<user id>',
      )
      .transform(
        (raw): DiscordInboxTarget =>
          raw.toLowerCase().startsWith('dm:')
            ? { kind: 'dm', userId: raw.slice(3) }
            : { kind: 'channel', channelId: raw },
      ),
    shown: 'unset (no Discord inbox)',
    doc: 'Where the email assistant’s interrupts are posted for answering with buttons: a channel id, or `dm:<user id>` for one person’s DMs. Unset: answered with `troupe inbox` only.',
  },
  TROUPE_DISCORD_INBOX_ROLES: {
    key: 'inboxRoles',
    schema: roles,
    default: [] as string[],
    shown: 'Manage Server',
    doc: 'Who may answer the inbox in a channel: comma-separated role ids or role names (any case). Unset: people with Manage Server. In a DM, only that user.',
  },
});

/**
 * Reads `troupe discord`'s settings from the environment (see {@link discordSettings}).
 *
 * @throws ConfigError `TROUPE_CONFIG_INVALID` naming every bad variable at once (the token's value
 *   is never quoted).
 */
export function discordFromEnv(env: EnvRecord): DiscordSettings {
  const { token, applicationId, apiUrl, inbox, ...rest } = settingsFromEnv(discordSettings, env);
  return {
    token,
    ...(applicationId ? { applicationId } : {}),
    ...(apiUrl ? { apiUrl } : {}),
    ...rest,
    ...(inbox ? { inbox } : {}),
  };
}

/** The name {@link discordFromEnv} had first. */
export const discordSettingsFromEnv = discordFromEnv;
