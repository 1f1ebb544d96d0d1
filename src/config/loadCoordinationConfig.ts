import { ConfigError, type ConfigProblem } from './configError.js';
import {
  type CoordinationConfig,
  type CoordinationVariable,
  coordinationSettings,
  defaultCoordinationConfig,
} from './coordinationConfig.js';

/**
 * Parses the coordination knobs once from an environment-like record (usually `process.env`).
 * Unset or empty variables take their defaults; any invalid value throws a {@link ConfigError}
 * listing every problem. Machines never read the environment: pass the result in.
 */
export function loadCoordinationConfig(
  env: Readonly<Record<string, string | undefined>>,
  overrides: Partial<CoordinationConfig> = {},
): CoordinationConfig {
  const config: Record<string, unknown> = { ...defaultCoordinationConfig };
  const problems: ConfigProblem[] = [];
  for (const [variable, setting] of Object.entries(coordinationSettings) as [
    CoordinationVariable,
    (typeof coordinationSettings)[CoordinationVariable],
  ][]) {
    const raw = env[variable];
    if (raw === undefined || raw.trim() === '') continue;
    const parsed = setting.schema.safeParse(raw);
    if (parsed.success) config[setting.key] = parsed.data;
    else
      problems.push({ variable, value: raw, expected: parsed.error.issues[0]?.message ?? 'a valid value' });
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return { ...(config as CoordinationConfig), ...overrides };
}
