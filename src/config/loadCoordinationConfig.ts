import { ConfigError, type ConfigProblem } from './configError.js';
import {
  type CoordinationConfig,
  type CoordinationConfigInput,
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

/**
 * Validates coordination settings given in code (`createRuntime({ config })`) with the same rules
 * as the environment: missing keys take their defaults; an unknown key or a bad value throws a
 * {@link ConfigError} naming every problem, with the option and its variable.
 */
export function resolveCoordinationConfig(input: unknown = {}): CoordinationConfig {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw new ConfigError([
      { variable: 'config', value: String(input), expected: 'an object of coordination settings' },
    ]);
  }
  const byKey = new Map(
    (
      Object.entries(coordinationSettings) as [
        CoordinationVariable,
        (typeof coordinationSettings)[CoordinationVariable],
      ][]
    ).map(([variable, setting]) => [setting.key as string, { variable, setting }]),
  );
  const config: Record<string, unknown> = { ...defaultCoordinationConfig };
  const problems: ConfigProblem[] = [];
  for (const [key, raw] of Object.entries(input as CoordinationConfigInput)) {
    if (raw === undefined) continue;
    const known = byKey.get(key);
    if (!known) {
      problems.push({
        variable: `config.${key}`,
        value: shown(raw),
        expected: `one of the coordination settings (${[...byKey.keys()].join(', ')})`,
      });
      continue;
    }
    const parsed = known.setting.schema.safeParse(raw);
    if (parsed.success) config[key] = parsed.data;
    else
      problems.push({
        variable: `config.${key} (${known.variable})`,
        value: shown(raw),
        expected: parsed.error.issues[0]?.message ?? 'a valid value',
      });
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return config as CoordinationConfig;
}

/**
 * A value as a person reads it in an error: text as written, numbers as numbers (JSON would write
 * Infinity and NaN as null), objects as JSON where JSON can write them (not a BigInt inside, not
 * a cycle) — never an exception of its own while the real problem is being reported.
 */
function shown(raw: unknown): string {
  if (typeof raw === 'string') return raw;
  if (typeof raw === 'object' && raw !== null) {
    try {
      return JSON.stringify(raw);
    } catch {
      return Object.prototype.toString.call(raw);
    }
  }
  return String(raw);
}
