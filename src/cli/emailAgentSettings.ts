import { readFileSync } from 'node:fs';
import { type EnvRecord, readSettings, throwIfProblems } from '../config/settings.js';
import { defaultUserBackground, emailSettings, MAX_BACKGROUND } from '../email/emailSettings.js';

/** The email assistant's agent settings, read from the environment (see {@link emailSettings}). */
export interface EmailAgentSettings {
  /** Who the user is and their role, for triage and the agent. */
  background: string;
  /** Where it came from: the variable's text, the file it names, or the default. */
  backgroundFrom: 'setting' | 'default' | { file: string };
  maxSteps: number;
  maxUnreviewedCalls: number;
}

/**
 * Reads `TROUPE_EMAIL_BACKGROUND` (the text, or `@path` naming a file that holds it),
 * `TROUPE_EMAIL_MAX_STEPS` and `TROUPE_EMAIL_MAX_UNREVIEWED_CALLS`.
 *
 * @throws ConfigError `TROUPE_CONFIG_INVALID` naming every bad variable.
 */
export function emailAgentSettingsFromEnv(env: EnvRecord, userName: string): EmailAgentSettings {
  const { value, problems } = readSettings(emailSettings, env);
  const { maxSteps, maxUnreviewedCalls } = value;
  const raw = env.TROUPE_EMAIL_BACKGROUND?.trim() ?? '';
  let background = defaultUserBackground(userName);
  let backgroundFrom: EmailAgentSettings['backgroundFrom'] = 'default';
  if (raw.startsWith('@')) {
    const file = raw.slice(1).trim();
    let text = '';
    try {
      text = readFileSync(file, 'utf8').trim();
    } catch (error) {
      const why = (error as NodeJS.ErrnoException).code ?? 'unreadable';
      problems.push({
        variable: 'TROUPE_EMAIL_BACKGROUND',
        value: raw,
        expected: `a readable file after “@” (${file} could not be read: ${why})`,
      });
    }
    if (text) {
      background = text;
      backgroundFrom = { file };
    } else if (problems.every((p) => p.variable !== 'TROUPE_EMAIL_BACKGROUND'))
      problems.push({
        variable: 'TROUPE_EMAIL_BACKGROUND',
        value: raw,
        expected: `a file that holds the background (${file} is empty)`,
      });
  } else if (raw) {
    background = raw;
    backgroundFrom = 'setting';
  }
  if (background.length > MAX_BACKGROUND)
    problems.push({
      variable: 'TROUPE_EMAIL_BACKGROUND',
      value: raw.length > 80 ? `${raw.slice(0, 77)}...` : raw,
      expected: `a background of at most ${MAX_BACKGROUND} characters (it has ${background.length})`,
    });
  throwIfProblems(problems);
  return { background, backgroundFrom, maxSteps, maxUnreviewedCalls };
}
