import { SimulatedClock, systemClock } from '../actors/clock.js';
import { EmailAssistant } from '../actors/emailAssistant.js';
import { createAiSdkObjectModel } from '../adapters/llm/aiSdkObjectModel.js';
import { modelFromEnv } from '../adapters/llm/modelFromEnv.js';
import { createLocalCalendar, createLocalMailbox } from '../adapters/mail/localMailbox.js';
import { ConfigError, type ConfigProblem } from '../config/configError.js';
import type { Logger } from '../logging/logger.js';
import type { ObjectModel } from '../ports/objectModel.js';
import type { TroupeStore } from '../ports/store.js';

/** The email assistant as the CLI runs it, on a store it was given. */
export interface OpenedEmailAssistant {
  assistant: EmailAssistant;
  mailbox: ReturnType<typeof createLocalMailbox>;
  calendar: ReturnType<typeof createLocalCalendar>;
  /** The model's name for people (or what works offline). */
  model: string;
}

/**
 * The email assistant on `store`, with the local mailbox and calendar and the model, user, time
 * zone and clock of the environment. `troupe email`, `troupe inbox` and `troupe discord` (its
 * Discord inbox) open it the same way, so an interrupt raised by one is answered by another.
 *
 * @throws ConfigError `TROUPE_CONFIG_INVALID` naming every bad variable (the model's, or
 *   `TROUPE_EMAIL_NOW` / `TROUPE_EMAIL_TIME_ZONE`).
 */
export function openEmailAssistant(
  env: Readonly<Record<string, string | undefined>>,
  store: TroupeStore,
  logger: Logger,
): OpenedEmailAssistant {
  let model: ObjectModel | undefined;
  let modelName = 'offline (rules, the preferences’ words and templates; no model)';
  const configured = modelFromEnv(env, { logger });
  if (configured.languageModel) {
    model = createAiSdkObjectModel({
      model: configured.languageModel,
      id: configured.model.id,
      timeoutMs: configured.config.timeoutMs,
      maxRetries: configured.config.maxRetries,
      ...(configured.limit ? { limit: configured.limit } : {}),
      logger,
    });
    modelName = configured.model.id;
  }
  // TROUPE_EMAIL_NOW pins the clock (reproducible runs and the README's example).
  const nowSetting = env.TROUPE_EMAIL_NOW?.trim();
  const pinned = nowSetting ? Date.parse(nowSetting) : Number.NaN;
  const timeZone = env.TROUPE_EMAIL_TIME_ZONE?.trim() || 'UTC';
  const problems: ConfigProblem[] = [];
  if (nowSetting && !Number.isFinite(pinned))
    problems.push({
      variable: 'TROUPE_EMAIL_NOW',
      value: nowSetting,
      expected: 'an ISO 8601 time, e.g. 2026-11-25T09:00:00Z',
    });
  try {
    new Intl.DateTimeFormat('en', { timeZone });
  } catch {
    problems.push({
      variable: 'TROUPE_EMAIL_TIME_ZONE',
      value: timeZone,
      expected: 'an IANA time zone, e.g. Europe/Berlin',
    });
  }
  if (problems.length > 0) throw new ConfigError(problems);
  const clock = Number.isFinite(pinned) ? new SimulatedClock(pinned) : systemClock;
  const mailbox = createLocalMailbox(store.documents, { now: () => clock.now() });
  const calendar = createLocalCalendar(store.documents);
  const assistant = new EmailAssistant({
    store,
    mailbox,
    calendar,
    clock,
    ...(model ? { model } : {}),
    userName: env.TROUPE_EMAIL_USER?.trim() || 'Sam',
    timeZone,
    logger,
  });
  return { assistant, mailbox, calendar, model: modelName };
}
