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
} as const;

/** The Discord settings, parsed. */
export interface DiscordSettings {
  token: string;
  applicationId?: string;
  apiUrl?: string;
  directMessages: boolean;
  allowBots: 'all' | string[];
  summonRoles: string[];
  summonsPerDay: number;
}

const SNOWFLAKE = /^\d{17,20}$/u;
const list = (raw: string | undefined) =>
  (raw ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');

/**
 * Reads `troupe discord`'s settings from the environment.
 *
 * @throws ConfigError `TROUPE_CONFIG_INVALID` naming every bad variable (the token's value is
 *   never quoted).
 */
export function discordSettingsFromEnv(env: Env): DiscordSettings {
  const problems: ConfigProblem[] = [];
  const token = env.DISCORD_TOKEN?.trim() ?? '';
  if (token === '')
    problems.push({
      variable: 'DISCORD_TOKEN',
      value: '',
      expected: 'the bot token from the Discord Developer Portal (Bot → Reset Token)',
    });
  else if (/\s/u.test(token) || token.toLowerCase().startsWith('bot '))
    problems.push({
      variable: 'DISCORD_TOKEN',
      value: '(hidden)',
      expected: 'the token alone, without "Bot " in front and without spaces',
    });
  const applicationId = env.DISCORD_APPLICATION_ID?.trim() || undefined;
  if (applicationId !== undefined && !SNOWFLAKE.test(applicationId))
    problems.push({
      variable: 'DISCORD_APPLICATION_ID',
      value: applicationId,
      expected: 'a Discord id (17 to 20 digits), as shown on the application’s General Information page',
    });
  // discord.js appends `/v10`: a trailing slash would make `//v10`.
  const apiUrl = env.DISCORD_API_URL?.trim().replace(/\/+$/u, '') || undefined;
  if (apiUrl !== undefined && !/^https?:\/\/[^\s/@]+(\/\S*)?$/u.test(apiUrl))
    problems.push({
      variable: 'DISCORD_API_URL',
      value: apiUrl,
      expected: 'an http(s) URL without credentials, e.g. https://discord.com/api',
    });
  const dms = (env.TROUPE_DISCORD_DMS ?? '').trim().toLowerCase();
  let directMessages = false;
  if (['true', '1', 'yes', 'on'].includes(dms)) directMessages = true;
  else if (!['', 'false', '0', 'no', 'off'].includes(dms))
    problems.push({
      variable: 'TROUPE_DISCORD_DMS',
      value: env.TROUPE_DISCORD_DMS ?? '',
      expected: 'true or false (also 1/0, yes/no, on/off)',
    });
  const bots = list(env.TROUPE_DISCORD_ALLOW_BOTS);
  const allowAll = bots.length === 1 && bots[0]?.toLowerCase() === 'all';
  if (!allowAll && bots.some((b) => !SNOWFLAKE.test(b)))
    problems.push({
      variable: 'TROUPE_DISCORD_ALLOW_BOTS',
      value: env.TROUPE_DISCORD_ALLOW_BOTS ?? '',
      expected: 'comma-separated bot user ids (17 to 20 digits), or all',
    });
  const summonRoles = list(env.TROUPE_DISCORD_SUMMON_ROLES).map((r) => r.replace(/^@/u, ''));
  if (summonRoles.some((r) => r.length > 100))
    problems.push({
      variable: 'TROUPE_DISCORD_SUMMON_ROLES',
      value: env.TROUPE_DISCORD_SUMMON_ROLES ?? '',
      expected: 'comma-separated role ids or names of at most 100 characters',
    });
  const perDayRaw = env.TROUPE_DISCORD_SUMMONS_PER_DAY?.trim() ?? '';
  let summonsPerDay = 20;
  if (perDayRaw !== '') {
    summonsPerDay = /^\d{1,5}$/u.test(perDayRaw) ? Number(perDayRaw) : Number.NaN;
    if (!(summonsPerDay >= 0 && summonsPerDay <= 10_000))
      problems.push({
        variable: 'TROUPE_DISCORD_SUMMONS_PER_DAY',
        value: perDayRaw,
        expected: 'a whole number from 0 to 10000 (0: no limit)',
      });
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return {
    token,
    ...(applicationId ? { applicationId } : {}),
    ...(apiUrl ? { apiUrl } : {}),
    directMessages,
    allowBots: allowAll ? 'all' : bots,
    summonRoles,
    summonsPerDay,
  };
}
