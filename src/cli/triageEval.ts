import { readFile } from 'node:fs/promises';
import { parse as parseYaml } from 'yaml';
import { ConfigError } from '../config/configError.js';
import { terminalText } from '../delivery/terminalText.js';
import { type EvalResult, formatEvalReport, parseEvalSet, scoreEval } from '../email/triageEval.js';
import {
  defaultTriagePreferences,
  type TriagePreferences,
  triagePreferencesSchema,
} from '../email/triagePreferences.js';
import { triageEmail } from '../email/triageRouter.js';
import { createLogger } from '../logging/logger.js';
import { logLevelFromEnv } from '../logging/logLevel.js';
import type { ObjectModel } from '../ports/objectModel.js';
import { describe } from '../ports/troupeError.js';
import { fail } from './fail.js';
import { emailModelsFromEnv } from './openEmailAssistant.js';

/** What `troupe triage-eval` needs. */
export interface TriageEvalOptions {
  file: string;
  /** A preferences file (YAML or JSON: `{ instructions, rules }`, or Markdown: the instructions). */
  preferencesFile?: string;
  json: boolean;
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  env: Readonly<Record<string, string | undefined>>;
}

/**
 * `troupe triage-eval <file.jsonl>`: runs labelled emails through the triage router (the model
 * from the environment, or the offline router) with the default or given preferences, and prints
 * accuracy, the confusion matrix, precision and recall per class, and each mistake with the
 * router's reasoning. Lines that cannot be read are reported and skipped. Exit 0 when it ran, 2 for
 * an unusable file or setting.
 */
export async function runTriageEval(options: TriageEvalOptions): Promise<number> {
  let text: string;
  try {
    text = await readFile(options.file, 'utf8');
  } catch (error) {
    return fail(
      options.stderr,
      'TROUPE_TRIAGE_EVAL_INVALID',
      `Cannot read ${options.file} (${(error as NodeJS.ErrnoException).code ?? describe(error)}).`,
    );
  }
  const { emails, problems } = parseEvalSet(text);
  for (const p of problems) options.stderr(`line ${p.line} skipped: ${terminalText(p.message)}\n`);
  if (emails.length === 0)
    return fail(
      options.stderr,
      'TROUPE_TRIAGE_EVAL_INVALID',
      `${options.file} has no usable line: write one {"email": ..., "label": "ignore" | "notify" | "respond"} per line.`,
    );

  let preferences: TriagePreferences = defaultTriagePreferences;
  if (options.preferencesFile) {
    try {
      preferences = await readPreferencesFile(options.preferencesFile);
    } catch (error) {
      return fail(
        options.stderr,
        'TROUPE_TRIAGE_EVAL_INVALID',
        `The preferences file ${options.preferencesFile} is not usable: ${describe(error)}`,
      );
    }
  }
  let model: ObjectModel | undefined;
  let router = 'offline (rules, then the preferences’ words; no model)';
  try {
    const logger = createLogger({ level: logLevelFromEnv(options.env, 'warn') });
    const models = emailModelsFromEnv(options.env, logger);
    model = models.model;
    if (model) router = `rules, then ${models.modelName}`;
  } catch (error) {
    if (!ConfigError.isInstance(error)) throw error;
    return fail(options.stderr, error.code, error.message);
  }

  const results: EvalResult[] = [];
  for (const item of emails) {
    try {
      results.push({ item, decision: await triageEmail(item.email, preferences, model ? { model } : {}) });
    } catch (error) {
      results.push({ item, error: describe(error) });
    }
  }
  const report = scoreEval(results);
  options.stdout(
    options.json
      ? `${JSON.stringify({ router, ...report, mistakes: report.mistakes.map((m) => ({ line: m.item.line, label: m.item.label, decision: m.decision, error: m.error })) }, null, 2)}\n`
      : terminalText(formatEvalReport(report, router)),
  );
  return 0;
}

async function readPreferencesFile(file: string): Promise<TriagePreferences> {
  const text = await readFile(file, 'utf8');
  if (/\.(md|txt)$/iu.test(file)) return triagePreferencesSchema.parse({ instructions: text, rules: [] });
  return triagePreferencesSchema.parse(parseYaml(text, { maxAliasCount: 100 }));
}
