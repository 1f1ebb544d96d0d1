import { SimulatedClock } from '../../src/actors/clock.js';
import { EmailAssistant, type EmailAssistantOptions } from '../../src/actors/email/emailAssistant.js';
import { createLocalCalendar, createLocalMailbox } from '../../src/adapters/mail/localMailbox.js';
import type { ObjectModel } from '../../src/ports/objectModel.js';
import type { TroupeStore } from '../../src/ports/store.js';

/** When the email tests' simulated clock starts. */
export const EMAIL_START = Date.parse('2026-11-25T09:00:00Z');

/**
 * An email assistant on `store` with the local mailbox and calendar (kept in the same store), on a
 * simulated clock, for Sam in Europe/Berlin; offline unless given a model (triage and memory) or
 * an agent model in `extra` (drafting).
 */
export function assistantOn(
  store: TroupeStore,
  clock = new SimulatedClock(EMAIL_START),
  model?: ObjectModel,
  extra: Partial<EmailAssistantOptions> = {},
) {
  const mailbox = createLocalMailbox(store.documents, { now: () => clock.now() });
  const calendar = createLocalCalendar(store.documents);
  const assistant = new EmailAssistant({
    store,
    mailbox,
    calendar,
    clock,
    userName: 'Sam',
    timeZone: 'Europe/Berlin',
    ...(model ? { model } : {}),
    ...extra,
  });
  return { assistant, mailbox, calendar, clock };
}
