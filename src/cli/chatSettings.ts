import type { AvatarDefinition } from '../actors/avatarDefinition.js';
import { nameProblem } from '../actors/avatarNames.js';
import { type ModelFromEnv, modelFromEnv } from '../adapters/llm/modelFromEnv.js';
import { type AvatarCreationSettings, avatarCreationFromEnv } from '../config/avatarCreationSettings.js';
import { ConfigError } from '../config/configError.js';
import { type ReplyConfig, replyFromEnv } from '../config/replySettings.js';
import { terminalText } from '../delivery/terminalText.js';
import { createLogger, type Logger } from '../logging/logger.js';
import { logLevelFromEnv } from '../logging/logLevel.js';
import { avatarModelProblem } from './avatarModelCheck.js';
import { loadAvatarsFile } from './avatarsFile.js';
import type { ChatOptions } from './chatOptions.js';
import { fail, readOrFail } from './fail.js';

/** What `troupe chat` reads from its options and the environment before it opens anything. */
export interface ChatSettings {
  /** The person's display name, trimmed. */
  name: string;
  avatars: AvatarDefinition[];
  logger: Logger;
  model: ModelFromEnv;
  replies: ReplyConfig;
  /** Whether `/summon` creates an avatar nobody has (on unless `TROUPE_SUMMON_CREATES` says no). */
  creation: AvatarCreationSettings;
}

const CHANNEL_ID = /^[\w.-]{1,100}$/u;

/**
 * Checks the channel id and the name, reads the avatars file, the log level, the model and the
 * reply settings, in that order. Returns the exit code after writing the first problem found.
 */
export async function readChatSettings(options: ChatOptions): Promise<ChatSettings | number> {
  const { stderr, env } = options;
  const name = checkChannelAndName(options);
  if (typeof name === 'number') return name;
  const avatars = await readOrFail(stderr, () => loadAvatarsFile(options.avatarsFile));
  if (typeof avatars === 'number') return avatars;
  const level = await readOrFail(
    stderr,
    () => ({ level: logLevelFromEnv(env, 'warn') }),
    ConfigError.isInstance,
  );
  if (typeof level === 'number') return level;
  const logger = createLogger(level);
  const read = await readOrFail(
    stderr,
    () => ({
      model: modelFromEnv(env, { logger }),
      replies: replyFromEnv(env),
      creation: avatarCreationFromEnv(env, true),
    }),
    ConfigError.isInstance,
  );
  if (typeof read === 'number') return read;
  const { model, replies, creation } = read;
  const modelProblem = avatarModelProblem(avatars, model);
  if (modelProblem) return fail(stderr, modelProblem.code, modelProblem.message);
  return { name, avatars, logger, model, replies, creation };
}

/** The trimmed name, or the exit code when the channel id or the name is refused. */
function checkChannelAndName(options: ChatOptions): string | number {
  const { stderr } = options;
  if (!CHANNEL_ID.test(options.channel)) {
    return fail(
      stderr,
      'TROUPE_CHANNEL_INVALID',
      `"${options.channel}" is not a channel id: use letters, digits, "_", "-" or ".".`,
    );
  }
  const name = options.name.trim();
  if (name === '' || name.length > 100) {
    return fail(stderr, 'TROUPE_NAME_INVALID', 'Your --name must have 1 to 100 characters.');
  }
  const nameIssue = nameProblem(name);
  if (nameIssue)
    return fail(
      stderr,
      'TROUPE_NAME_INVALID',
      `Your --name ${terminalText(JSON.stringify(name))} ${nameIssue}.`,
    );
  return name;
}
