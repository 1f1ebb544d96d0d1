import { ConfigError, type ConfigProblem } from './configError.js';
import {
  type CoordinationConfig,
  type CoordinationConfigInput,
  type CoordinationVariable,
  coordinationSettings,
  defaultCoordinationConfig,
} from './coordinationConfig.js';
import { type EnvRecord, settingsFromEnv } from './settings.js';
import { zodMessages } from './zodIssues.js';

/**
 * Reads the coordination knobs once from an environment-like record (usually `process.env`).
 * Unset or blank variables take their defaults; `overrides` win over both. Machines never read the
 * environment: pass the result in.
 * @throws ConfigError `TROUPE_CONFIG_INVALID` listing every invalid variable at once.
 */
export function coordinationFromEnv(
  env: EnvRecord,
  overrides: Partial<CoordinationConfig> = {},
): CoordinationConfig {
  return { ...settingsFromEnv(coordinationSettings, env), ...overrides };
}

/** The name {@link coordinationFromEnv} had first; the README's embedding example used it. */
export const loadCoordinationConfig = coordinationFromEnv;

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
        expected: zodMessages(parsed.error),
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
