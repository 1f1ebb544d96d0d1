/**
 * The composer's settings ("Configuration"): list limits and the capabilities that
 * decide whether the composer offers to create a missing record. They are read at every
 * composition, so changing them needs no restart.
 */
import type { ConfigProblem } from '../config/configError.js';
import { count, flag } from '../config/settingSchemas.js';
import {
  defineSettings,
  type EnvRecord,
  readSettings,
  type SettingsValue,
  settingsDefaults,
  throwIfProblems,
} from '../config/settings.js';

/**
 * Every environment variable the composer reads, keyed by its name, with its config key, parser,
 * default and what it does. Docs print their configuration table from this list.
 */
export const composerSettings = defineSettings({
  AI_RESPONSE_DISAMBIG_LIMIT: {
    key: 'disambiguationLimit',
    schema: count(1, 100),
    default: 5,
    doc: 'Most numbered options a disambiguation reply lists (1 to 100); a note says when more exist.',
  },
  AI_RESPONSE_TABLE_PREVIEW_LIMIT: {
    key: 'tablePreviewLimit',
    schema: count(1, 100),
    default: 5,
    doc: 'Most rows the table preview of a success reply shows (1 to 100); the reply says "showing N of total".',
  },
  AGENT_CAN_CREATE_VENDOR: {
    key: 'canCreateVendor',
    schema: flag,
    default: false,
    doc: 'When a vendor is not found, offer to create it, and let "create vendor <name>" create one (true); or point to Vendors → Add New and refuse to create (false).',
  },
  AGENT_CAN_CREATE_CUSTOMER: {
    key: 'canCreateCustomer',
    schema: flag,
    default: false,
    doc: 'When a customer is not found, offer to create it, and let "create customer <name>" create one (true); or point to Customers → Add New and refuse to create (false).',
  },
  AGENT_CAN_CREATE_PART: {
    key: 'canCreatePart',
    schema: flag,
    default: false,
    doc: 'When a part is not found, offer to create it, and let "create part <name>" create one (true); or point to Parts → Add New and refuse to create (false).',
  },
});

type Settings = typeof composerSettings;

/** Environment variable names the composer reads. */
export type ComposerVariable = keyof Settings;

/** The typed composer settings. */
export type ComposerConfig = SettingsValue<Settings>;

/** What the composer runs with when nothing is set. */
export const defaultComposerConfig: Readonly<ComposerConfig> = Object.freeze(
  settingsDefaults(composerSettings),
);

export type { EnvRecord };

/**
 * Where the composer's settings come from: an environment-like record read at each composition
 * (pass `process.env` itself, not a copy), or a function returning one, called at each composition.
 */
export type EnvSource = EnvRecord | (() => EnvRecord);

/** Settings read from an environment, and the variables that were invalid (they took their defaults). */
export interface ReadComposerConfig {
  config: ComposerConfig;
  problems: ConfigProblem[];
}

/**
 * Reads the composer's settings from `env` without throwing: unset or blank variables take their
 * defaults, and so do invalid ones, which are listed in `problems`.
 */
export function readComposerConfig(env: EnvRecord): ReadComposerConfig {
  const { value, problems } = readSettings(composerSettings, env);
  return { config: value, problems };
}

/**
 * Parses the composer's settings from `env` (usually `process.env`). Unset or blank variables take
 * their defaults.
 * @throws ConfigError naming every invalid variable, its value and what is allowed.
 */
export function composerFromEnv(env: EnvRecord): ComposerConfig {
  const { config, problems } = readComposerConfig(env);
  throwIfProblems(problems);
  return config;
}

/** The name {@link composerFromEnv} had first. */
export const composerConfigFrom = composerFromEnv;

function limit(value: unknown, fallback: number): number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 1 ? Math.floor(value) : fallback;
}

/** How {@link compose} gets its settings. */
export interface ComposerConfigOptions {
  /** Settings given directly; they win over `env`, key by key. */
  config?: Partial<ComposerConfig>;
  /**
   * Read at every composition, so a long-running process sees a change on its next reply:
   * pass `process.env` (the live object) or a function such as `() => process.env`.
   */
  env?: EnvSource;
}

/**
 * The settings one composition uses: defaults, then `options.env` (read now), then
 * `options.config`. Never throws: invalid environment values fall back to their defaults and are
 * returned in `problems`; out-of-range limits given in `config` fall back to the defaults too.
 */
export function resolveComposerConfig(options: ComposerConfigOptions = {}): ReadComposerConfig {
  const source = options.env;
  const env = typeof source === 'function' ? source() : source;
  const read = env ? readComposerConfig(env) : { config: { ...defaultComposerConfig }, problems: [] };
  const given = options.config ?? {};
  const merged = { ...read.config, ...given };
  const config: ComposerConfig = {
    disambiguationLimit: limit(merged.disambiguationLimit, read.config.disambiguationLimit),
    tablePreviewLimit: limit(merged.tablePreviewLimit, read.config.tablePreviewLimit),
    canCreateVendor: merged.canCreateVendor === true,
    canCreateCustomer: merged.canCreateCustomer === true,
    canCreatePart: merged.canCreatePart === true,
  };
  return { config, problems: read.problems };
}
