import { type EnvRecord, readSettings, throwIfProblems } from '../../config/settings.js';
import type { TurnModel, TurnModelResolver } from '../../ports/model.js';
import { checkModelChoice } from './modelResolver.js';
import { modelSettings } from './modelSettings.js';

/**
 * The resolver of a run that plays every avatar with one offline model (`troupe simulate`): a
 * choice naming an unknown provider, or a profile `TROUPE_MODEL_PROFILES` does not define, is
 * refused as a live run refuses it; any other is played by `offline`. No key is needed and no
 * provider is ever called.
 *
 * @throws ConfigError `TROUPE_CONFIG_INVALID` when `TROUPE_MODEL_PROFILES` does not parse.
 */
export function offlinePlayResolver(env: EnvRecord, offline: TurnModel): TurnModelResolver {
  const { value, problems } = readSettings(
    { TROUPE_MODEL_PROFILES: modelSettings.TROUPE_MODEL_PROFILES },
    env,
  );
  throwIfProblems(problems);
  return (choice) => {
    checkModelChoice(choice, value.profiles);
    return offline;
  };
}
