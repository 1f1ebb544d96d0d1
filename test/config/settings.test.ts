import { describe, expect, it } from 'vitest';
import { discordFromEnv } from '../../src/adapters/discord/discordSettings.js';
import { storeFromEnv } from '../../src/adapters/store/storeFromEnv.js';
import { ConfigError } from '../../src/config/configError.js';
import { count, flag, text } from '../../src/config/settingSchemas.js';
import { defineSettings, readSettings, settingsFromEnv } from '../../src/config/settings.js';

const table = defineSettings({
  A_COUNT: { key: 'size', schema: count(1, 10), default: 5, doc: 'a count' },
  A_FLAG: { key: 'on', schema: flag, default: false, doc: 'a flag' },
  A_KEY: { key: 'apiKey', schema: count(1, 2), secret: true, doc: 'a secret' },
  A_NAME: { key: 'name', schema: text, required: 'a name', doc: 'required' },
});

describe('the settings module', () => {
  it('reads trimmed text, takes defaults for unset or blank variables', () => {
    expect(settingsFromEnv(table, { A_COUNT: ' 7 ', A_FLAG: '', A_NAME: 'x' })).toEqual({
      size: 7,
      on: false,
      name: 'x',
    });
  });

  it('reports every problem at once, with the variable names, and the default in place', () => {
    const { value, problems } = readSettings(table, { A_COUNT: '11', A_FLAG: 'maybe', A_KEY: 'sk-123' });
    expect(problems.map((p) => p.variable)).toEqual(['A_COUNT', 'A_FLAG', 'A_KEY', 'A_NAME']);
    expect(value).toMatchObject({ size: 5, on: false });
    expect(() => settingsFromEnv(table, { A_COUNT: '11', A_NAME: 'x' })).toThrow(
      /A_COUNT="11" is not allowed; expected a whole number from 1 to 10/u,
    );
  });

  it("never shows a secret's value in an error", () => {
    let error: unknown;
    try {
      settingsFromEnv(table, { A_KEY: 'sk-very-secret', A_NAME: 'x' });
    } catch (caught) {
      error = caught;
    }
    expect(ConfigError.isInstance(error)).toBe(true);
    expect(JSON.stringify((error as ConfigError).problems)).not.toContain('sk-very-secret');
    expect((error as Error).message).not.toContain('sk-very-secret');
    expect((error as Error).message).toContain('A_KEY="[redacted]"');
  });

  it('a table reports its problems together: the Discord token hidden, the store kind and the timeout', () => {
    expect(() =>
      discordFromEnv({ DISCORD_TOKEN: 'Bot secret-token', TROUPE_DISCORD_DMS: 'perhaps' }),
    ).toThrow(
      expect.objectContaining({
        problems: [
          expect.objectContaining({ variable: 'DISCORD_TOKEN', value: '[redacted]' }),
          expect.objectContaining({ variable: 'TROUPE_DISCORD_DMS', value: 'perhaps' }),
        ],
      }),
    );
    expect(() => storeFromEnv({ TROUPE_STORE: 'postgres', TROUPE_SQLITE_BUSY_TIMEOUT_MS: 'soon' })).toThrow(
      /TROUPE_STORE="postgres"[\s\S]*TROUPE_SQLITE_BUSY_TIMEOUT_MS="soon"/u,
    );
  });
});
