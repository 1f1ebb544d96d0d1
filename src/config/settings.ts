import type { z } from 'zod';
import { ConfigError, type ConfigProblem } from './configError.js';
import { zodMessages } from './zodIssues.js';

/** An environment-like record, such as `process.env`. */
export type EnvRecord = Readonly<Record<string, string | undefined>>;

/** What a secret's value is shown as in errors: never the value itself. */
export const REDACTED = '[redacted]';

/**
 * One environment variable, defined once: the config key it fills, the zod schema that reads its
 * text (trimmed), its default, how docs print that default, what it does, and whether it is secret.
 */
export interface Setting<Out = unknown> {
  /** The key of the typed config this variable fills. */
  readonly key: string;
  /** Reads the variable's text, trimmed; its first issue's message says what is allowed. */
  // biome-ignore lint/suspicious/noExplicitAny: the input side differs (text, or text and values given in code).
  readonly schema: z.ZodType<Out, any>;
  /** The value when the variable is unset or blank (and when it is invalid, for readers that go on). */
  readonly default?: Out;
  /** How docs print the default when it is not a value (`inferred`, `the system clock`). */
  readonly shown?: string;
  /** What the variable does: one README table cell. */
  readonly doc: string;
  /** A key, token or credentialed URL: errors show `[redacted]` instead of its value. */
  readonly secret?: boolean;
  /** Set for a variable that must be given: what to tell a person when it is not. */
  readonly required?: string;
  /** Blank text is a value of its own (an empty search), not "unset". */
  readonly keepBlank?: boolean;
}

/** Settings keyed by their environment variable name. */
export type SettingsTable = Readonly<Record<string, Setting>>;

type ValueOf<S> =
  S extends Setting<infer Out>
    ? S extends { required: string }
      ? Out
      : S extends { default: infer D }
        ? undefined extends D
          ? Out | undefined
          : Out
        : Out | undefined
    : never;

/** The typed config a table reads into: each setting's key with its parsed value. */
export type SettingsValue<T extends SettingsTable> = {
  -readonly [V in keyof T as T[V]['key']]: ValueOf<T[V]>;
};

/** What {@link readSettings} returns: the config, and every variable that was invalid or missing. */
export interface SettingsRead<T extends SettingsTable> {
  /** The config; an invalid variable takes its default here. */
  value: SettingsValue<T>;
  problems: ConfigProblem[];
}

/** Declares a table of settings, keeping each entry's literal types (its key, its schema's output). */
export function defineSettings<const T extends SettingsTable>(table: T): T {
  return table;
}

/** The defaults of a table, as a config. */
export function settingsDefaults<T extends SettingsTable>(table: T): SettingsValue<T> {
  const value: Record<string, unknown> = {};
  for (const setting of Object.values(table))
    if (setting.default !== undefined) value[setting.key] = setting.default;
  return value as SettingsValue<T>;
}

/**
 * Reads every variable of `table` from `env` without throwing. Text is trimmed; unset or blank
 * variables take their defaults; a variable that does not parse takes its default too and is
 * listed in `problems` (a secret's value as `[redacted]`), and so is a required one that is unset.
 */
export function readSettings<T extends SettingsTable>(table: T, env: EnvRecord): SettingsRead<T> {
  const value = settingsDefaults(table) as Record<string, unknown>;
  const problems: ConfigProblem[] = [];
  for (const [variable, setting] of Object.entries(table)) {
    const written = env[variable];
    const text = written?.trim();
    if (text === undefined || (text === '' && !setting.keepBlank)) {
      if (setting.required !== undefined) problems.push({ variable, value: '', expected: setting.required });
      continue;
    }
    const parsed = setting.schema.safeParse(text);
    if (parsed.success) value[setting.key] = parsed.data;
    else
      problems.push({
        variable,
        value: setting.secret ? REDACTED : (written ?? ''),
        expected: zodMessages(parsed.error),
      });
  }
  return { value: value as SettingsValue<T>, problems };
}

/** Throws one {@link ConfigError} naming every problem, when there is any. */
export function throwIfProblems(problems: readonly ConfigProblem[]): void {
  if (problems.length > 0) throw new ConfigError(problems);
}

/**
 * Reads every variable of `table` from `env`.
 * @throws ConfigError `TROUPE_CONFIG_INVALID` naming every invalid or missing variable at once.
 */
export function settingsFromEnv<T extends SettingsTable>(table: T, env: EnvRecord): SettingsValue<T> {
  const { value, problems } = readSettings(table, env);
  throwIfProblems(problems);
  return value;
}

/** The default as a README cell: the `shown` text, else the value in code font. */
export function shownDefault(setting: Setting): string {
  if (setting.shown !== undefined) return setting.shown;
  if (setting.default === undefined) return 'unset';
  return `\`${typeof setting.default === 'string' ? setting.default : JSON.stringify(setting.default)}\``;
}

/** A table's rows for the README: variable, default, what it does. */
export function settingsRows(table: SettingsTable): string[] {
  return Object.entries(table).map(
    ([variable, setting]) => `| \`${variable}\` | ${shownDefault(setting)} | ${setting.doc} |`,
  );
}
