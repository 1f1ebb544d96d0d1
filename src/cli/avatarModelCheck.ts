import type { AvatarDefinition } from '../actors/avatarDefinition.js';
import { resolveAvatarModels } from '../actors/avatarModels.js';
import type { ModelFromEnv } from '../adapters/llm/modelFromEnv.js';
import { isTroupeError, type TroupeError } from '../ports/troupeError.js';

/**
 * Builds every avatar's own model (`model:` in the avatars file) from the environment before
 * anything opens, so a bad one stops the command at start: the refusal naming the avatar, or
 * undefined when every model is there. The runtime later gets the same models from the resolver.
 */
export function avatarModelProblem(
  avatars: readonly AvatarDefinition[],
  model: Pick<ModelFromEnv, 'model' | 'models'>,
): TroupeError | undefined {
  try {
    resolveAvatarModels(avatars, model.model, model.models);
    return undefined;
  } catch (error) {
    if (isTroupeError(error)) return error;
    throw error;
  }
}
