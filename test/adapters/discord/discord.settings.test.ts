import { describe, expect, it } from 'vitest';
import { discordSettingsFromEnv } from '../../../src/adapters/discord/discordSettings.js';
import { ConfigError } from '../../../src/config/configError.js';

const token = 'MTIz.secret-token.value';

describe('Discord settings from the environment', () => {
  it('reads every variable with its default', () => {
    expect(discordSettingsFromEnv({ DISCORD_TOKEN: token })).toEqual({
      token,
      directMessages: false,
      allowBots: [],
      summonRoles: [],
      summonsPerDay: 20,
      inboxRoles: [],
    });
    expect(
      discordSettingsFromEnv({
        DISCORD_TOKEN: ` ${token} `,
        DISCORD_APPLICATION_ID: '900000000000000001',
        DISCORD_API_URL: 'http://127.0.0.1:8080/api/',
        TROUPE_DISCORD_DMS: 'on',
        TROUPE_DISCORD_ALLOW_BOTS: 'all',
        TROUPE_DISCORD_SUMMON_ROLES: '@Summoners, 400000000000000002',
        TROUPE_DISCORD_SUMMONS_PER_DAY: '0',
      }),
    ).toEqual({
      token,
      applicationId: '900000000000000001',
      apiUrl: 'http://127.0.0.1:8080/api',
      directMessages: true,
      allowBots: 'all',
      summonRoles: ['Summoners', '400000000000000002'],
      summonsPerDay: 0,
      inboxRoles: [],
    });
  });

  it('reads the Discord inbox: a channel id or dm:<user id>, and who may answer it', () => {
    expect(
      discordSettingsFromEnv({
        DISCORD_TOKEN: token,
        TROUPE_DISCORD_INBOX: '200000000000000001',
        TROUPE_DISCORD_INBOX_ROLES: '@Assistants, 400000000000000002',
      }),
    ).toMatchObject({
      inbox: { kind: 'channel', channelId: '200000000000000001' },
      inboxRoles: ['Assistants', '400000000000000002'],
    });
    expect(
      discordSettingsFromEnv({ DISCORD_TOKEN: token, TROUPE_DISCORD_INBOX: 'DM:300000000000000001' }).inbox,
    ).toEqual({ kind: 'dm', userId: '300000000000000001' });
    let error: unknown;
    try {
      discordSettingsFromEnv({ DISCORD_TOKEN: token, TROUPE_DISCORD_INBOX: '#general' });
    } catch (e) {
      error = e;
    }
    expect((error as ConfigError).problems).toEqual([
      {
        variable: 'TROUPE_DISCORD_INBOX',
        value: '#general',
        expected:
          'a channel id (17 to 20 digits; Developer Mode → right-click the channel → Copy Channel ID), or dm:<user id>',
      },
    ]);
  });

  it('names every bad variable at once, and never quotes the token', () => {
    let error: unknown;
    try {
      discordSettingsFromEnv({
        DISCORD_TOKEN: `Bot ${token}`,
        DISCORD_APPLICATION_ID: 'my-app',
        DISCORD_API_URL: 'https://user:pw@proxy/api',
        TROUPE_DISCORD_DMS: 'maybe',
        TROUPE_DISCORD_ALLOW_BOTS: 'gitbot',
        TROUPE_DISCORD_SUMMONS_PER_DAY: '-1',
      });
    } catch (e) {
      error = e;
    }
    expect(ConfigError.isInstance(error)).toBe(true);
    const problems = (error as ConfigError).problems.map((p) => p.variable);
    expect(problems).toEqual([
      'DISCORD_TOKEN',
      'DISCORD_APPLICATION_ID',
      'DISCORD_API_URL',
      'TROUPE_DISCORD_DMS',
      'TROUPE_DISCORD_ALLOW_BOTS',
      'TROUPE_DISCORD_SUMMONS_PER_DAY',
    ]);
    expect((error as Error).message).not.toContain(token);
    expect((error as Error).message).not.toContain('pw@');
    expect((error as Error).message).toContain('without "Bot " in front');
  });

  it('without a token says where to get one', () => {
    expect(() => discordSettingsFromEnv({})).toThrow(/DISCORD_TOKEN.*Developer Portal/su);
  });
});
