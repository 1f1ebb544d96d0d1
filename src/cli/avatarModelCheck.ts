import { type AvatarDefinition, avatarListSchema } from '../actors/avatarDefinition.js';
import { resolveAvatarModels } from '../actors/avatarModels.js';
import type { ModelFromEnv } from '../adapters/llm/modelFromEnv.js';
import { offlinePlayResolver } from '../adapters/llm/offlinePlayResolver.js';
import { createScriptedModel } from '../adapters/llm/scriptedModel.js';
import { scenarioAvatars } from '../app/scenarioAvatars.js';
import type { EnvRecord } from '../config/settings.js';
import { isTroupeError, type TroupeError } from '../ports/troupeError.js';
import type { Scenario } from '../simulator/scenario.js';

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

/**
 * A scenario's avatars' models checked for `troupe simulate`, which plays every turn with the
 * offline scripted model: an unknown provider, or a profile `TROUPE_MODEL_PROFILES` does not
 * define, is refused as `troupe chat` refuses it (naming the avatar); no key is needed.
 */
export function scenarioModelProblem(scenario: Scenario, env: EnvRecord): TroupeError | undefined {
  const offline = createScriptedModel();
  try {
    const models = offlinePlayResolver(env, offline);
    return avatarModelProblem(avatarListSchema.parse(scenarioAvatars(scenario)), { model: offline, models });
  } catch (error) {
    if (isTroupeError(error)) return error;
    throw error;
  }
}
