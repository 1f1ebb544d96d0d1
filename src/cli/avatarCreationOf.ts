import type { AvatarCreationOptions } from '../actors/avatarCreator.js';
import type { ModelFromEnv } from '../adapters/llm/modelFromEnv.js';
import { objectModelOf } from '../adapters/llm/objectModelOf.js';
import type { AvatarCreationSettings } from '../config/avatarCreationSettings.js';
import type { Logger } from '../logging/logger.js';

/**
 * How a command's runtime creates avatars: the settings it read, and the environment's model to
 * write personas with (structured output; offline, the template).
 */
export function avatarCreationOf(
  creation: AvatarCreationSettings,
  model: ModelFromEnv,
  logger: Logger,
): AvatarCreationOptions {
  const writer = objectModelOf(model, logger);
  return { ...creation, ...(writer ? { model: writer } : {}) };
}
