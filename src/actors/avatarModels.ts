import type { TurnModel, TurnModelResolver } from '../ports/model.js';
import { isTroupeError, TroupeError } from '../ports/troupeError.js';
import type { AvatarDefinition } from './avatarDefinition.js';

/**
 * The model of each avatar that names one (`model:`), built once per distinct choice when the
 * runtime starts: a choice equal to the default model's id is the default model itself. Avatars
 * without a choice are not in the map (they use the default).
 *
 * @throws TroupeError `TROUPE_AVATAR_MODEL_INVALID` naming the first avatar whose choice the
 *   resolver refuses, the value, and why.
 */
export function resolveAvatarModels(
  avatars: readonly AvatarDefinition[],
  defaultModel: TurnModel,
  resolve: TurnModelResolver,
): ReadonlyMap<string, TurnModel> {
  const byChoice = new Map<string, TurnModel>([[defaultModel.id, defaultModel]]);
  const byAvatar = new Map<string, TurnModel>();
  for (const avatar of avatars) {
    const choice = avatar.model;
    if (choice === undefined) continue;
    let model = byChoice.get(choice);
    if (!model) {
      model = resolveFor(avatar, choice, resolve);
      byChoice.set(choice, model);
    }
    byAvatar.set(avatar.id, model);
  }
  return byAvatar;
}

function resolveFor(avatar: AvatarDefinition, choice: string, resolve: TurnModelResolver): TurnModel {
  try {
    return resolve(choice);
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    throw new TroupeError(
      'TROUPE_AVATAR_MODEL_INVALID',
      `Avatar ${avatar.name} (${avatar.id}) has model "${choice}": ${why}`,
      {
        cause: error,
        details: {
          avatar: avatar.id,
          model: choice,
          ...(isTroupeError(error) ? { reason: error.code } : {}),
        },
      },
    );
  }
}
