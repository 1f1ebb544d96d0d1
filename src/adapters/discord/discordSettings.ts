import { z } from 'zod';
import { ConfigError, type ConfigProblem } from '../../config/configError.js';

type Env = Readonly<Record<string, string | undefined>>;

/** The environment variables of `troupe discord`, with defaults and docs (the README's table). */
export const discordSettings = {
  DISCORD_TOKEN: {
    default: 'required',
    doc: 'The bot token (Developer Portal → your application → Bot → Reset Token). Never logged or shown.',
  },
  DISCORD_APPLICATION_ID: {
    default: 'from the token',
    doc: 'The application id; when set, start-up checks that the token belongs to it.',
  },
  DISCORD_API_URL: {
    default: 'https://discord.com/api',
    doc: 'REST base URL (a REST proxy, or a fake in tests); discord.js adds the version. The gateway URL still comes from `GET /gateway/bot`.',
  },
  TROUPE_DISCORD_DMS: {
    default: 'false',
    doc: 'Answer direct messages to the bot (adds the DM intent); in a DM the bot speaks, the avatar named in bold.',
  },
  TROUPE_DISCORD_ALLOW_BOTS: {
    default: 'none',
    doc: 'Other bots (and webhooks) whose messages the avatars hear: comma-separated user ids, or `all`. The avatars’ own messages are never answered.',
  },
  TROUPE_DISCORD_SUMMON_ROLES: {
    default: 'everyone',
    doc: 'Who may use /summon: comma-separated role ids or role names (any case).',
  },
  TROUPE_DISCORD_SUMMONS_PER_DAY: {
    default: '20',
    doc: 'Summons per person per day (UTC), 0 to 10000 (0: no limit); the person is told the limit when they reach it.',
  },
  TROUPE_DISCORD_INBOX: {
    default: 'unset (no Discord inbox)',
    doc: 'Where the email assistant’s interrupts are posted for answering with buttons: a channel id, or `dm:<user id>` for one person’s DMs. Unset: answered with `troupe inbox` only.',
  },
  TROUPE_DISCORD_INBOX_ROLES: {
    default: 'Manage Server',
    doc: 'Who may answer the inbox in a channel: comma-separated role ids or role names (any case). Unset: people with Manage Server. In a DM, only that user.',
  },
} as const;

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
const list = (raw: string) =>
  raw
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
const optional = (raw: string | undefined) =>
  raw === undefined || raw.trim() === '' ? undefined : raw.trim();

/** One schema per variable: what it accepts, what it becomes, and what to tell a person otherwise. */
const variables = {
  DISCORD_TOKEN: z
    .string({ message: 'the bot token from the Discord Developer Portal (Bot → Reset Token)' })
    .refine((t) => !/\s/u.test(t) && !t.toLowerCase().startsWith('bot '), {
      message: 'the token alone, without "Bot " in front and without spaces',
    }),
  DISCORD_APPLICATION_ID: z
    .string()
    .regex(
      SNOWFLAKE,
      'a Discord id (17 to 20 digits), as shown on the application’s General Information page',
    )
    .optional(),
  DISCORD_API_URL: z
    .string()
    .regex(
      /^https?:\/\/[^\s/@]+(\/\S*)?$/u,
      'an http(s) URL without credentials, e.g. https://discord.com/api',
    )
    // discord.js appends `/v10`: a trailing slash would make `//v10`.
    .transform((url) => url.replace(/\/+$/u, ''))
    .optional(),
  TROUPE_DISCORD_DMS: z
    .string()
    .transform((v) => v.toLowerCase())
    .refine((v) => ['true', '1', 'yes', 'on', 'false', '0', 'no', 'off'].includes(v), {
      message: 'true or false (also 1/0, yes/no, on/off)',
    })
    .transform((v) => ['true', '1', 'yes', 'on'].includes(v))
    .optional(),
  TROUPE_DISCORD_ALLOW_BOTS: z
    .string()
    .transform(list)
    .refine(
      (ids) => (ids.length === 1 && ids[0]?.toLowerCase() === 'all') || ids.every((id) => SNOWFLAKE.test(id)),
      {
        message: 'comma-separated bot user ids (17 to 20 digits), or all',
      },
    )
    .transform((ids): 'all' | string[] => (ids.length === 1 && ids[0]?.toLowerCase() === 'all' ? 'all' : ids))
    .optional(),
  TROUPE_DISCORD_SUMMON_ROLES: z
    .string()
    .transform((raw) => list(raw).map((r) => r.replace(/^@/u, '')))
    .refine((roles) => roles.every((r) => r.length <= 100), {
      message: 'comma-separated role ids or names of at most 100 characters',
    })
    .optional(),
  TROUPE_DISCORD_SUMMONS_PER_DAY: z
    .string()
    .regex(/^\d{1,5}$/u, 'a whole number from 0 to 10000 (0: no limit)')
    .transform(Number)
    .refine((n) => n <= 10_000, { message: 'a whole number from 0 to 10000 (0: no limit)' })
    .optional(),
  TROUPE_DISCORD_INBOX: z
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
    )
    .optional(),
  TROUPE_DISCORD_INBOX_ROLES: z
    .string()
    .transform((raw) => list(raw).map((r) => r.replace(/^@/u, '')))
    .refine((roles) => roles.every((r) => r.length <= 100), {
      message: 'comma-separated role ids or names of at most 100 characters',
    })
    .optional(),
} as const;

/**
 * Reads `troupe discord`'s settings from the environment, each variable with its zod schema.
 *
 * @throws ConfigError `TROUPE_CONFIG_INVALID` naming every bad variable at once (the token's value
 *   is never quoted).
 */
export function discordSettingsFromEnv(env: Env): DiscordSettings {
  const problems: ConfigProblem[] = [];
  const values: Record<string, unknown> = {};
  for (const [variable, schema] of Object.entries(variables) as [keyof typeof variables, z.ZodType][]) {
    const raw = optional(env[variable]);
    const parsed = schema.safeParse(raw);
    if (parsed.success) {
      values[variable] = parsed.data;
      continue;
    }
    problems.push({
      variable,
      value: variable === 'DISCORD_TOKEN' ? (raw === undefined ? '' : '(hidden)') : (raw ?? ''),
      expected: parsed.error.issues[0]?.message ?? 'a valid value',
    });
  }
  if (problems.length > 0) throw new ConfigError(problems);
  const applicationId = values.DISCORD_APPLICATION_ID as string | undefined;
  const apiUrl = values.DISCORD_API_URL as string | undefined;
  return {
    token: values.DISCORD_TOKEN as string,
    ...(applicationId ? { applicationId } : {}),
    ...(apiUrl ? { apiUrl } : {}),
    directMessages: (values.TROUPE_DISCORD_DMS as boolean | undefined) ?? false,
    allowBots: (values.TROUPE_DISCORD_ALLOW_BOTS as 'all' | string[] | undefined) ?? [],
    summonRoles: (values.TROUPE_DISCORD_SUMMON_ROLES as string[] | undefined) ?? [],
    summonsPerDay: (values.TROUPE_DISCORD_SUMMONS_PER_DAY as number | undefined) ?? 20,
    ...(values.TROUPE_DISCORD_INBOX ? { inbox: values.TROUPE_DISCORD_INBOX as DiscordInboxTarget } : {}),
    inboxRoles: (values.TROUPE_DISCORD_INBOX_ROLES as string[] | undefined) ?? [],
  };
}
