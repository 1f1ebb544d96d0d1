import { z } from 'zod';
import { DURATION_RANGE, parseDurationMs } from './duration.js';
import { allowed, count, durationMs, flag, oneOf, ratio, usd } from './settingSchemas.js';
import { defineSettings, type SettingsValue, settingsDefaults } from './settings.js';

const EXTENSION = `a duration such as 90s or 90000 (${DURATION_RANGE}), or a share of the TTL such as 50%`;
/**
 * How far activity pushes a thread's deadline: a duration (`90s`, `90000`) or a share of the
 * thread's own TTL (`50%`), kept as written so each thread applies it to its TTL.
 */
const extension = z
  .union([z.number(), z.string()], allowed(EXTENSION))
  .transform((raw, ctx): number | `${number}%` => {
    if (typeof raw === 'string') {
      const share = /^\s*(\d{1,3}(?:\.\d+)?)\s*%\s*$/.exec(raw);
      if (share) {
        const n = Number(share[1]);
        if (n > 0 && n <= 100) return `${n}%`;
      }
    }
    const ms = parseDurationMs(raw);
    if (ms !== undefined && ms > 0) return ms;
    ctx.addIssue({ code: 'custom', message: EXTENSION });
    return z.NEVER;
  });

const priority = oneOf(['high', 'normal', 'low']);

/**
 * Every coordination knob, keyed by its environment variable name, with its default.
 * The README's configuration table is generated from (and tested against) this list.
 */
export const coordinationSettings = defineSettings({
  CONVERSATION_THREAD_TTL: {
    key: 'threadTtlMs',
    schema: durationMs,
    default: 180_000,
    doc: 'How long a conversation thread lives without activity before it expires.',
  },
  CONVERSATION_THREAD_MAX_TURNS: {
    key: 'threadMaxTurns',
    schema: count(1, 1000),
    default: 6,
    doc: 'Most turns in a reply-mode thread (and the fallback for other modes).',
  },
  CONVERSATION_THREAD_EXTEND_ON_ACTIVITY: {
    key: 'threadExtendOnActivity',
    schema: flag,
    default: true,
    doc: 'Each delivered turn pushes the thread deadline out to now + `THREAD_ACTIVITY_EXTENSION`.',
  },
  THREAD_ACTIVITY_EXTENSION: {
    key: 'threadActivityExtension',
    schema: extension,
    default: '50%' as number | `${number}%`,
    doc: 'How far a delivered turn pushes its thread deadline (from now): a duration, or a share of the thread TTL (default: half).',
  },
  THREAD_BACKOFF_BASE: {
    key: 'threadBackoffBaseMs',
    schema: durationMs,
    default: 10_000,
    doc: 'After a thread between two avatars ends, they open no new thread together for this long, doubled for each further thread within THREAD_BACKOFF_WINDOW (0: no backoff).',
  },
  THREAD_BACKOFF_WINDOW: {
    key: 'threadBackoffWindowMs',
    schema: durationMs,
    default: 600_000,
    doc: 'Threads between the same two avatars that end within this window of each other back off further; the wait never exceeds it.',
  },
  CONVERSATION_THREAD_QUIET: {
    key: 'threadQuietMs',
    schema: durationMs,
    default: 45_000,
    doc: 'A thread whose last turn addressed nobody concludes naturally after this much quiet.',
  },
  SUMMON_PROACTIVE_ENABLED: {
    key: 'summonProactiveEnabled',
    schema: flag,
    default: true,
    doc: 'After the greeting, the summoned avatar speaks once more on its own, acknowledging who is present.',
  },
  SUMMON_FOLLOWUP_DELAY: {
    key: 'summonFollowUpDelayMs',
    schema: durationMs,
    default: 3_000,
    doc: 'Delay between a delivered greeting and the proactive follow-up.',
  },
  SUMMON_SECOND_FOLLOWUP_MS: {
    key: 'summonSecondFollowUpMs',
    schema: durationMs,
    default: 8_000,
    doc: 'After its follow-up, a summoned avatar speaks once more this much later, to whoever reacted to it since it arrived (0: never).',
  },
  SUMMON_INITIAL_TURNS: {
    key: 'summonInitialTurns',
    schema: count(0, 100),
    default: 5,
    doc: 'Guaranteed turns granted on summon; each turn the avatar delivers while its summon conversation lasts (greeting aside) spends one.',
  },
  SUMMON_CONVERSATION_DURATION: {
    key: 'summonConversationDurationMs',
    schema: durationMs,
    default: 300_000,
    doc: 'How long a summoned avatar stays in conversation mode (and the summon thread lives).',
  },
  SUMMON_THREAD_TURNS: {
    key: 'summonThreadTurns',
    schema: count(1, 1000),
    default: 8,
    doc: 'Most turns in the thread a summon opens with the avatars already present.',
  },
  BOT_MENTION_CASCADE_LIMIT: {
    key: 'botCascadeLimit',
    schema: count(0, 100),
    default: 3,
    doc: 'Bot-to-bot responses allowed after one human message (the cascade lane of its budget); one avatar message gets at most min(this, `MAX_RESPONSES_PER_MESSAGE`) answers, the message that opens a mention thread too (with `1`, one of the avatars it names answers it; the others may speak later as thread turns).',
  },
  BOT_MENTION_CREATE_THREAD: {
    key: 'botMentionCreateThread',
    schema: flag,
    default: true,
    doc: 'An avatar mentioning other avatars opens a mention thread with them.',
  },
  BOT_MENTION_THREAD_TURNS: {
    key: 'botMentionThreadTurns',
    schema: count(1, 1000),
    default: 6,
    doc: 'Most turns in a thread opened by a bot mention.',
  },
  TROUPE_WITNESS_BACKFILL: {
    key: 'witnessBackfill',
    schema: count(0, 100),
    default: 5,
    doc: "How many messages said before an avatar's arrival its prompts show (0: none). Beyond these, an avatar's prompts hold only messages said while it was present, and its own.",
  },
  MENTION_GRANT_TURNS: {
    key: 'mentionGrantTurns',
    schema: count(0, 100),
    default: 2,
    doc: 'Guaranteed turns granted to a mentioned avatar that has none left.',
  },
  THREAD_RESPONSE_PRIORITY: {
    key: 'threadResponsePriority',
    schema: priority,
    default: 'high',
    doc: 'Where the thread rung sits: high (right after replies), normal (after mentions), low (after round-robin).',
  },
  THREAD_OVERRIDE_COOLDOWN: {
    key: 'threadOverrideCooldown',
    schema: flag,
    default: true,
    doc: 'Thread participants may answer while their per-avatar cooldown runs.',
  },
  PER_AVATAR_COOLDOWN: {
    key: 'perAvatarCooldownMs',
    schema: durationMs,
    default: 120_000,
    doc: 'After speaking, an avatar is not chosen by the ambient rungs (round-robin, initiative), nor by the thread rung when THREAD_OVERRIDE_COOLDOWN is false, for this long.',
  },
  RECENT_SUMMON_COOLDOWN: {
    key: 'recentSummonCooldownMs',
    schema: durationMs,
    default: 30_000,
    doc: 'The shorter cooldown that applies instead while an avatar is in conversation mode after a summon; it also spaces out the summon rung.',
  },
  STICKY_AFFINITY_TTL: {
    key: 'stickyAffinityTtlMs',
    schema: durationMs,
    default: 60_000,
    doc: 'How long a user keeps talking to the same avatar without naming it.',
  },
  MAX_RESPONSES_PER_MESSAGE: {
    key: 'maxResponsesPerMessage',
    schema: count(1, 50),
    default: 3,
    doc: 'Avatar responses allowed to one human message (the main lane of its budget).',
  },
  ATTENTION_HALF_LIFE: {
    key: 'attentionHalfLifeMs',
    schema: durationMs,
    default: 300_000,
    doc: 'Attention halves over this much time since its last update (decay by elapsed time, never compounded).',
  },
  ACTIVE_SPEAKER_WINDOW: {
    key: 'activeSpeakerWindowMs',
    schema: durationMs,
    default: 600_000,
    doc: 'Avatars that spoke within this window take round-robin turns on unaddressed messages.',
  },
  INITIATIVE_THRESHOLD: {
    key: 'initiativeThreshold',
    schema: ratio,
    default: 0.35,
    doc: 'Lowest initiative score (recency, hunger, topic) that lets an avatar speak unprompted.',
  },
  GREETING_MAX_CHARS: {
    key: 'greetingMaxChars',
    schema: count(20, 2000),
    default: 150,
    doc: 'Longest summon greeting; longer greetings are cut at a word boundary.',
  },
  TROUPE_CHANNEL_MAX_AVATAR_MESSAGES_PER_HOUR: {
    key: 'channelMaxAvatarMessagesPerHour',
    schema: count(0, 1_000_000),
    default: 0,
    doc: 'Most avatar messages in one channel per rolling hour, every lane counted (thread, cascade, summon, follow-up, mention…); 0: no cap.',
  },
  TROUPE_AVATAR_MAX_TOKENS_PER_DAY: {
    key: 'avatarMaxTokensPerDay',
    schema: count(0, 1_000_000_000_000),
    default: 0,
    doc: 'Most model tokens (input and output) one avatar spends per UTC day; an avatar may set its own (`caps:` in the avatars file); 0: no cap.',
  },
  TROUPE_AVATAR_MAX_COST_PER_DAY_USD: {
    key: 'avatarMaxCostPerDayUsd',
    schema: usd,
    default: 0,
    doc: 'Most estimated model cost (USD, from the price table) one avatar spends per UTC day; overridable per avatar; 0: no cap.',
  },
  TROUPE_MAX_TOKENS_PER_DAY: {
    key: 'maxTokensPerDay',
    schema: count(0, 1_000_000_000_000),
    default: 0,
    doc: 'Most model tokens all avatars and the email assistant spend together per UTC day; 0: no cap.',
  },
  TROUPE_MAX_COST_PER_DAY_USD: {
    key: 'maxCostPerDayUsd',
    schema: usd,
    default: 0,
    doc: 'Most estimated model cost (USD) of every call together per UTC day; 0: no cap.',
  },
  TROUPE_CAP_NOTICE: {
    key: 'capNotice',
    schema: oneOf(['notice', 'silent']),
    default: 'notice' as 'notice' | 'silent',
    doc: 'What a person who mentions an avatar that reached a cap sees: one short notice per person per reset window (`notice`), or nothing (`silent`).',
  },
});

type Settings = typeof coordinationSettings;
/** Environment variable names that configure coordination. */
export type CoordinationVariable = keyof Settings;

/** The typed coordination config that the channel floor and its machines receive. */
export type CoordinationConfig = SettingsValue<Settings>;

/**
 * Coordination settings as a program may write them: any subset of {@link CoordinationConfig},
 * with durations as milliseconds or strings (`'3m'`) and flags as booleans or strings, exactly as
 * the environment variables accept them.
 */
export type CoordinationConfigInput = {
  -readonly [K in CoordinationVariable as Settings[K]['key']]?: z.input<Settings[K]['schema']>;
};

/** Defaults for every knob: what Troupe runs with when nothing is set. */
export const defaultCoordinationConfig: CoordinationConfig = settingsDefaults(coordinationSettings);
