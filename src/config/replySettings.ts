import { count } from './settingSchemas.js';
import { defineSettings, type EnvRecord, type SettingsValue, settingsFromEnv } from './settings.js';

/** The longest reply sent by default: a few thousand characters, about two Discord messages. */
export const DEFAULT_MAX_REPLY_CHARS = 4_000;
/** Bounds for the reply cap: below 200 a reply cannot say much; above 100,000 it is no cap. */
export const MIN_MAX_REPLY_CHARS = 200;
export const MAX_MAX_REPLY_CHARS = 100_000;

/** The environment variables for replies, with their defaults and docs (the README's table). */
export const replySettings = defineSettings({
  TROUPE_MAX_REPLY_CHARS: {
    key: 'maxReplyChars',
    schema: count(MIN_MAX_REPLY_CHARS, MAX_MAX_REPLY_CHARS, 'characters'),
    default: DEFAULT_MAX_REPLY_CHARS,
    doc: `Longest model reply sent (${MIN_MAX_REPLY_CHARS} to ${MAX_MAX_REPLY_CHARS}); a longer one is clipped at a sentence boundary before it is prepared, and the clip is logged.`,
  },
});

/** The reply settings, parsed. */
export type ReplyConfig = SettingsValue<typeof replySettings>;

/**
 * Reads the reply settings from environment variables.
 * @throws ConfigError `TROUPE_CONFIG_INVALID` naming the variable, its value and the allowed range.
 */
export function replyFromEnv(env: EnvRecord): ReplyConfig {
  return settingsFromEnv(replySettings, env);
}

/** The name {@link replyFromEnv} had first. */
export const replySettingsFromEnv = replyFromEnv;
