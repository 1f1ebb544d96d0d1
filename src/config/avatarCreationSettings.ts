import { count, flag } from './settingSchemas.js';
import { defineSettings, type EnvRecord, settingsFromEnv } from './settings.js';

/** Summoning a name no avatar has: whether it creates one, and how many one person may a day. */
export const avatarCreationSettings = defineSettings({
  TROUPE_SUMMON_CREATES: {
    key: 'enabled',
    schema: flag,
    shown: 'on in `troupe chat` and the studio, off on Discord',
    doc: 'Summoning a name no avatar has creates one: the model writes its persona and emoji (offline, a template that says it is one). Created avatars are stored, listed with the others, and removed with `/forget`.',
  },
  TROUPE_CREATES_PER_DAY: {
    key: 'perPersonPerDay',
    schema: count(0, 1000),
    default: 5,
    doc: 'Avatars one person may create by summoning per day (UTC), 0 to 1000 (0: no limit); the person is told when they can again.',
  },
});

/** Whether summoning creates avatars, and how many one person may create per day. */
export interface AvatarCreationSettings {
  enabled: boolean;
  perPersonPerDay: number;
}

/**
 * Reads {@link avatarCreationSettings}; `enabledByDefault` is the front end's default (the chat
 * and the studio create, Discord does not unless told to).
 *
 * @throws ConfigError `TROUPE_CONFIG_INVALID` naming the bad variables.
 */
export function avatarCreationFromEnv(env: EnvRecord, enabledByDefault: boolean): AvatarCreationSettings {
  const read = settingsFromEnv(avatarCreationSettings, env);
  return { enabled: read.enabled ?? enabledByDefault, perPersonPerDay: read.perPersonPerDay };
}
