import { SimulatedClock, systemClock } from '../actors/clock.js';
import { EmailAssistant } from '../actors/email/emailAssistant.js';
import { createUsageLedger } from '../actors/usage/storedUsageLedger.js';
import { HOUR_MS } from '../actors/usage/usageBucket.js';
import type { UsageLedger } from '../actors/usage/usageLedger.js';
import type { GmailAccount } from '../adapters/gmail/gmailAccount.js';
import type { GmailSettings } from '../adapters/gmail/gmailSettings.js';
import { createAiSdkAgentModel } from '../adapters/llm/aiSdkAgentModel.js';
import { createAiSdkObjectModel } from '../adapters/llm/aiSdkObjectModel.js';
import { modelFromEnv } from '../adapters/llm/modelFromEnv.js';
import { modelCallOf } from '../adapters/llm/objectModelOf.js';
import { createLocalCalendar, createLocalMailbox } from '../adapters/mail/localMailbox.js';
import { ConfigError, type ConfigProblem } from '../config/configError.js';
import { modelPricesFromEnv } from '../config/modelPrices.js';
import type { Logger } from '../logging/logger.js';
import type { AgentModel } from '../ports/agentModel.js';
import type { Calendar, EmailReply, Mailbox, MeetingRequest } from '../ports/mailbox.js';
import type { ObjectModel } from '../ports/objectModel.js';
import type { TroupeStore } from '../ports/store.js';
import { emailAgentSettingsFromEnv } from './emailAgentSettings.js';

/** The email assistant as the CLI runs it, on a store it was given. */
export interface OpenedEmailAssistant {
  assistant: EmailAssistant;
  /** The model's name for people (or what works offline). */
  model: string;
  /** The Gmail account, when Google credentials are set; else the local mailbox and calendar are used. */
  gmail?: { account: GmailAccount; settings: GmailSettings };
  /** Replies sent and meetings booked by this process (not repeats of earlier ones). */
  sentNow: (EmailReply & { messageId: string })[];
  bookedNow: (MeetingRequest & { eventId: string })[];
  /** Where the model's calls are counted (in the store), when there is a model. */
  usage?: UsageLedger;
  /**
   * Saves what must outlive the process (refreshed Google tokens, the usage of model calls not
   * stored yet); the store is the caller's.
   */
  close(): Promise<void>;
}

/**
 * The email assistant on `store`, with the model, user, time zone and clock of the environment,
 * on Gmail and Google Calendar when Google credentials are set, else the local mailbox and
 * calendar kept in the store. `troupe email`, `troupe inbox` and `troupe discord` (its Discord
 * inbox) open it the same way, so an interrupt raised by one is answered by another and its reply
 * goes out through the same mailbox.
 *
 * @throws ConfigError `TROUPE_CONFIG_INVALID` naming every bad variable (the model's, the
 *   Gmail settings', or `TROUPE_EMAIL_NOW` / `TROUPE_EMAIL_TIME_ZONE` / `TROUPE_EMAIL_BACKGROUND` /
 *   `TROUPE_EMAIL_MAX_STEPS` / `TROUPE_EMAIL_MAX_UNREVIEWED_CALLS`); TroupeError
 *   `TROUPE_MODEL_PRICES_INVALID` for a bad price table (read when there is a model);
 *   `TROUPE_GMAIL_AUTH` when Google refuses the credentials.
 */
export async function openEmailAssistant(
  env: Readonly<Record<string, string | undefined>>,
  store: TroupeStore,
  logger: Logger,
  /** The ledger to count in (a runtime's, so its daily totals include the assistant's calls). */
  shared?: UsageLedger,
): Promise<OpenedEmailAssistant> {
  const { model, agentModel, modelName } = emailModelsFromEnv(env, logger);
  const prices = model || agentModel ? modelPricesFromEnv(env) : undefined;
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
  const userName = env.TROUPE_EMAIL_USER?.trim() || 'Sam';
  let agentSettings: ReturnType<typeof emailAgentSettingsFromEnv> | undefined;
  try {
    agentSettings = emailAgentSettingsFromEnv(env, userName);
  } catch (error) {
    if (!ConfigError.isInstance(error)) throw error;
    problems.push(...error.problems);
  }
  if (problems.length > 0 || !agentSettings) throw new ConfigError(problems);
  const clock = Number.isFinite(pinned) ? new SimulatedClock(pinned) : systemClock;
  const usage =
    shared ??
    (prices
      ? // No runtime sweeps this ledger: it deletes its expired buckets itself, hourly.
        createUsageLedger({ store: store.documents, prices, logger, clock, expireEveryMs: HOUR_MS })
      : undefined);
  const gmail = await openGmail(env, store, logger, () => clock.now());
  const recorded: Pick<OpenedEmailAssistant, 'sentNow' | 'bookedNow'> = { sentNow: [], bookedNow: [] };
  const { mailbox, calendar } = recording(
    gmail?.account.mailbox ?? createLocalMailbox(store.documents, { now: () => clock.now() }),
    gmail?.account.calendar ?? createLocalCalendar(store.documents),
    recorded,
  );
  const assistant = new EmailAssistant({
    store,
    mailbox,
    calendar,
    clock,
    ...(model ? { model } : {}),
    ...(agentModel ? { agentModel } : {}),
    userName,
    background: agentSettings.background,
    maxSteps: agentSettings.maxSteps,
    maxUnreviewedCalls: agentSettings.maxUnreviewedCalls,
    timeZone,
    logger,
    ...(usage ? { usage } : {}),
  });
  return {
    assistant,
    model: modelName,
    ...(gmail ? { gmail } : {}),
    ...(usage ? { usage } : {}),
    ...recorded,
    close: async () => {
      await usage?.flush();
      await gmail?.account.auth.flush();
    },
  };
}

/** The mailbox and calendar, recording what this process sent and booked (for what the command prints). */
function recording(
  mailbox: Mailbox,
  calendar: Calendar,
  opened: Pick<OpenedEmailAssistant, 'sentNow' | 'bookedNow'>,
) {
  const recordingMailbox: Mailbox = {
    id: mailbox.id,
    async sendReply(reply, key) {
      const result = await mailbox.sendReply(reply, key);
      if (!result.duplicate) opened.sentNow.push({ ...reply, messageId: result.messageId });
      return result;
    },
    close: (emailId, outcome, context) => mailbox.close(emailId, outcome, context),
  };
  const recordingCalendar: Calendar = {
    availability: (day, zone) => calendar.availability(day, zone),
    async invite(meeting, key) {
      const result = await calendar.invite(meeting, key);
      if (!result.duplicate) opened.bookedNow.push({ ...meeting, eventId: result.eventId });
      return result;
    },
  };
  return { mailbox: recordingMailbox, calendar: recordingCalendar };
}

/**
 * The Gmail account when the environment has Google credentials (loaded only then: googleapis is
 * heavy), `undefined` without them.
 */
export async function openGmail(
  env: Readonly<Record<string, string | undefined>>,
  store: TroupeStore,
  logger: Logger,
  now: () => number,
): Promise<{ account: GmailAccount; settings: GmailSettings } | undefined> {
  const { gmailConfigured, gmailSettingsFromEnv } = await import('../adapters/gmail/gmailSettings.js');
  if (!gmailConfigured(env)) return undefined;
  const { readGmailCredentials } = await import('../adapters/gmail/gmailAuth.js');
  const { openGmailAccount } = await import('../adapters/gmail/gmailAccount.js');
  const settings = gmailSettingsFromEnv(env);
  const account = await openGmailAccount({
    credentials: await readGmailCredentials(settings),
    store,
    ...(settings.apiUrl ? { apiUrl: settings.apiUrl } : {}),
    ...(settings.tokenUrl ? { tokenUrl: settings.tokenUrl } : {}),
    syncQuery: settings.syncQuery,
    markRead: settings.markRead,
    logger,
    now,
  });
  return { account, settings };
}

/** The email assistant's models from the environment: one for objects, one for tool calls. */
export function emailModelsFromEnv(
  env: Readonly<Record<string, string | undefined>>,
  logger: Logger,
): { model?: ObjectModel; agentModel?: AgentModel; modelName: string } {
  const configured = modelFromEnv(env, { logger });
  const call = modelCallOf(configured, logger);
  if (!call) return { modelName: 'offline (rules, the preferences’ words and templates; no model)' };
  // Both share the provider's settings and its concurrency limit.
  return {
    model: createAiSdkObjectModel(call),
    agentModel: createAiSdkAgentModel(call),
    modelName: configured.model.id,
  };
}
