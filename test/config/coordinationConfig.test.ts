/**
 * Coordination configuration: the environment variables proposed by seed 003, their defaults, how
 * values are written (durations with units, flags), and how bad values are reported.
 */
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config/configError.js';
import {
  type CoordinationVariable,
  coordinationSettings,
  defaultCoordinationConfig,
} from '../../src/config/coordinationConfig.js';
import { loadCoordinationConfig, resolveCoordinationConfig } from '../../src/config/coordinationFromEnv.js';
import { DURATION_RANGE } from '../../src/config/duration.js';

/** What a bad duration is told: the forms, and the longest a timer can wait. */
const DURATION_EXPECTED = `a duration such as 180000, 180s, 3m or 1h, ${DURATION_RANGE}`;

/** Runs `fn` and returns the ConfigError it throws (fails the test if it throws nothing else). */
function configError(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error('expected a ConfigError');
}

describe('defaults', () => {
  it('match the values the seed proposes', () => {
    const config = loadCoordinationConfig({});
    expect(config).toMatchObject({
      threadTtlMs: 180_000, // CONVERSATION_THREAD_TTL=180000
      threadMaxTurns: 6, // CONVERSATION_THREAD_MAX_TURNS=6
      threadExtendOnActivity: true, // CONVERSATION_THREAD_EXTEND_ON_ACTIVITY=true
      threadActivityExtension: '50%', // activity extends the deadline to now + TTL/2
      summonProactiveEnabled: true, // SUMMON_PROACTIVE_ENABLED=true
      summonInitialTurns: 5, // SUMMON_INITIAL_TURNS=5
      summonConversationDurationMs: 300_000, // SUMMON_CONVERSATION_DURATION=300000
      botCascadeLimit: 3, // BOT_MENTION_CASCADE_LIMIT=3
      botMentionCreateThread: true, // BOT_MENTION_CREATE_THREAD=true
      botMentionThreadTurns: 6, // BOT_MENTION_THREAD_TURNS=6
      threadResponsePriority: 'high', // THREAD_RESPONSE_PRIORITY=high
      threadOverrideCooldown: true, // THREAD_OVERRIDE_COOLDOWN=true
      perAvatarCooldownMs: 120_000, // PER_AVATAR_COOLDOWN (120 s)
      stickyAffinityTtlMs: 60_000, // sticky affinity TTL (60 s)
      summonThreadTurns: 8, // the summon thread's maxTurns in solution 5
      summonFollowUpDelayMs: 3_000, // the follow-up setTimeout in solution 1
      mentionGrantTurns: 2, // grantNewSummonTurns(..., 2) for a mentioned avatar
    });
    expect(config).toEqual(defaultCoordinationConfig);
  });

  it('make the recent-summon cooldown shorter than the per-avatar cooldown', () => {
    expect(defaultCoordinationConfig.recentSummonCooldownMs).toBeLessThan(
      defaultCoordinationConfig.perAvatarCooldownMs,
    );
  });

  it('survive a round trip through their own parsers', () => {
    for (const [variable, setting] of Object.entries(coordinationSettings)) {
      const config = loadCoordinationConfig({ [variable]: String(setting.default) });
      expect(config[setting.key as keyof typeof config], variable).toEqual(setting.default);
    }
  });

  it('are taken for empty and blank values, and unrelated variables are ignored', () => {
    const env: Record<string, string> = { PATH: '/usr/bin', HOME: '/root' };
    for (const variable of Object.keys(coordinationSettings))
      env[variable] = variable.length % 2 ? '' : '   ';
    expect(loadCoordinationConfig(env)).toEqual(defaultCoordinationConfig);
  });
});

describe('how values are written', () => {
  it.each([
    ['180000', 180_000],
    ['0', 0],
    ['250ms', 250],
    ['180s', 180_000],
    ['1.5s', 1_500],
    ['3m', 180_000],
    ['1h', 3_600_000],
    [' 90 S ', 90_000],
    ['2M', 120_000],
  ])('CONVERSATION_THREAD_TTL=%j is %d ms', (raw, ms) => {
    expect(loadCoordinationConfig({ CONVERSATION_THREAD_TTL: raw }).threadTtlMs).toBe(ms);
  });

  it.each([
    ['true', true],
    ['TRUE', true],
    ['1', true],
    ['yes', true],
    ['on', true],
    ['false', false],
    ['0', false],
    ['No', false],
    [' off ', false],
  ])('SUMMON_PROACTIVE_ENABLED=%j is %s', (raw, value) => {
    expect(loadCoordinationConfig({ SUMMON_PROACTIVE_ENABLED: raw }).summonProactiveEnabled).toBe(value);
  });

  it('reads priorities in any case, counts with surrounding spaces and ratios as decimals', () => {
    const config = loadCoordinationConfig({
      THREAD_RESPONSE_PRIORITY: ' LOW ',
      BOT_MENTION_CASCADE_LIMIT: ' 0 ',
      MAX_RESPONSES_PER_MESSAGE: '50',
      INITIATIVE_THRESHOLD: '0.5',
    });
    expect(config).toMatchObject({
      threadResponsePriority: 'low',
      botCascadeLimit: 0,
      maxResponsesPerMessage: 50,
      initiativeThreshold: 0.5,
    });
  });

  it('reads THREAD_ACTIVITY_EXTENSION as a duration or a share of the TTL', () => {
    const read = (raw: string) =>
      loadCoordinationConfig({ THREAD_ACTIVITY_EXTENSION: raw }).threadActivityExtension;
    expect(read('50%')).toBe('50%');
    expect(read(' 25.5 % ')).toBe('25.5%');
    expect(read('90s')).toBe(90_000);
    expect(read('90000')).toBe(90_000);
    for (const bad of ['0%', '150%', '-5%', 'half', '0'])
      expect(() => read(bad), bad).toThrow(expect.objectContaining({ code: 'TROUPE_CONFIG_INVALID' }));
  });

  it('applies overrides after the environment', () => {
    const config = loadCoordinationConfig(
      { BOT_MENTION_CASCADE_LIMIT: '5' },
      { botCascadeLimit: 1, threadMaxTurns: 2 },
    );
    expect(config).toMatchObject({ botCascadeLimit: 1, threadMaxTurns: 2 });
  });
});

describe('bad values', () => {
  it('throw a ConfigError with a stable code whose message names the variable, the value and what is allowed', () => {
    const error = configError(() => loadCoordinationConfig({ CONVERSATION_THREAD_TTL: '3 weeks' }));
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe('ConfigError');
    expect(error.code).toBe('TROUPE_CONFIG_INVALID');
    expect(error.message).toContain('CONVERSATION_THREAD_TTL');
    expect(error.message).toContain('"3 weeks"');
    expect(error.message).toContain(DURATION_EXPECTED);
    expect(error.problems).toEqual([
      {
        variable: 'CONVERSATION_THREAD_TTL',
        value: '3 weeks',
        expected: DURATION_EXPECTED,
      },
    ]);
  });

  it.each<[CoordinationVariable, string, string]>([
    ['CONVERSATION_THREAD_TTL', '-5', DURATION_EXPECTED],
    ['SUMMON_FOLLOWUP_DELAY', '3d', DURATION_EXPECTED],
    ['CONVERSATION_THREAD_TTL', '600h', DURATION_EXPECTED],
    ['SUMMON_FOLLOWUP_DELAY', '9'.repeat(309), DURATION_EXPECTED],
    ['STICKY_AFFINITY_TTL', '2147483648', DURATION_EXPECTED],
    ['SUMMON_PROACTIVE_ENABLED', 'maybe', 'true or false (also 1/0, yes/no, on/off)'],
    ['THREAD_RESPONSE_PRIORITY', 'urgent', 'one of high, normal, low'],
    ['MAX_RESPONSES_PER_MESSAGE', '0', 'a whole number from 1 to 50'],
    ['CONVERSATION_THREAD_MAX_TURNS', '1e3', 'a whole number from 1 to 1000'],
    ['BOT_MENTION_CASCADE_LIMIT', '2.5', 'a whole number from 0 to 100'],
    ['SUMMON_INITIAL_TURNS', 'five', 'a whole number from 0 to 100'],
    ['INITIATIVE_THRESHOLD', '2', 'a number from 0 to 1'],
    ['INITIATIVE_THRESHOLD', 'NaN', 'a number from 0 to 1'],
  ])('%s=%j is rejected: expected %s', (variable, value, expected) => {
    const error = configError(() => loadCoordinationConfig({ [variable]: value }));
    expect(error.problems).toEqual([{ variable, value, expected }]);
    expect(error.message).toContain(
      `${variable}=${JSON.stringify(value)} is not allowed; expected ${expected}`,
    );
  });

  it('are all listed when there are several, in the order of the settings table', () => {
    const error = configError(() =>
      loadCoordinationConfig({
        THREAD_RESPONSE_PRIORITY: 'urgent',
        CONVERSATION_THREAD_TTL: 'soon',
        SUMMON_PROACTIVE_ENABLED: 'maybe',
        MAX_RESPONSES_PER_MESSAGE: '0',
        BOT_MENTION_CASCADE_LIMIT: '4', // fine
      }),
    );
    expect(error.problems.map((p) => p.variable)).toEqual([
      'CONVERSATION_THREAD_TTL',
      'SUMMON_PROACTIVE_ENABLED',
      'THREAD_RESPONSE_PRIORITY',
      'MAX_RESPONSES_PER_MESSAGE',
    ]);
    const lines = error.message.split('\n');
    expect(lines[0]).toBe('Invalid configuration:');
    expect(lines).toHaveLength(5);
    for (const p of error.problems)
      expect(error.message).toContain(`${p.variable}=${JSON.stringify(p.value)}`);
  });

  // BUG (minor, src/config/coordinationConfig.ts `ratio`): ratios go through Number(), which also
  // accepts hexadecimal, binary and octal literals, so INITIATIVE_THRESHOLD=0x1 silently becomes 1,
  // while counts accept only plain decimal digits.
  it('a number no timer can hold, given in code, is refused naming the range and the value as written', () => {
    // Infinity is what a 309-digit number becomes once parsed; NaN what a failed computation gives.
    const error = configError(() =>
      resolveCoordinationConfig({
        threadTtlMs: Number.POSITIVE_INFINITY,
        summonFollowUpDelayMs: Number.NaN,
        threadActivityExtension: Number.POSITIVE_INFINITY,
        maxResponsesPerMessage: Number.POSITIVE_INFINITY,
      } as never),
    );
    expect(error.problems).toEqual([
      {
        variable: 'config.threadTtlMs (CONVERSATION_THREAD_TTL)',
        value: 'Infinity',
        expected: `a whole number of milliseconds, 0 or more, ${DURATION_RANGE}`,
      },
      {
        variable: 'config.summonFollowUpDelayMs (SUMMON_FOLLOWUP_DELAY)',
        value: 'NaN',
        expected: `a whole number of milliseconds, 0 or more, ${DURATION_RANGE}`,
      },
      {
        variable: 'config.threadActivityExtension (THREAD_ACTIVITY_EXTENSION)',
        value: 'Infinity',
        expected: expect.stringContaining(DURATION_RANGE),
      },
      {
        variable: 'config.maxResponsesPerMessage (MAX_RESPONSES_PER_MESSAGE)',
        value: 'Infinity',
        expected: 'a whole number from 1 to 50',
      },
    ]);
    // Values JSON cannot write are named too, instead of a TypeError from writing the message.
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    const odd = configError(() =>
      resolveCoordinationConfig({ threadTtlMs: 10n, stickyAffinityTtlMs: circular } as never),
    );
    expect(odd.problems.map((p) => [p.variable, p.value])).toEqual([
      ['config.threadTtlMs (CONVERSATION_THREAD_TTL)', '10'],
      ['config.stickyAffinityTtlMs (STICKY_AFFINITY_TTL)', '[object Object]'],
    ]);
  });

  it('INITIATIVE_THRESHOLD=0x1 is rejected like other non-decimal numbers', () => {
    const error = configError(() => loadCoordinationConfig({ INITIATIVE_THRESHOLD: '0x1' }));
    expect(error.problems[0]?.variable).toBe('INITIATIVE_THRESHOLD');
  });
});
