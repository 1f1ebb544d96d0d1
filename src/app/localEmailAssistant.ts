import { EmailAssistant } from '../actors/email/emailAssistant.js';
import { createLocalCalendar, createLocalMailbox } from '../adapters/mail/localMailbox.js';
import type { Logger } from '../logging/logger.js';
import type { Clock } from '../ports/clock.js';
import type { TroupeStore } from '../ports/store.js';

/**
 * The email assistant offline on the local mailbox and calendar kept in `store` (no Gmail, no
 * model: the offline router and agent), for `Sam` in UTC: the tour's email act and `troupe
 * studio` run the sample mailbox through it.
 */
export function createLocalEmailAssistant(
  store: TroupeStore,
  clock: Clock,
  logger?: Logger,
): { assistant: EmailAssistant; mailbox: ReturnType<typeof createLocalMailbox> } {
  const mailbox = createLocalMailbox(store.documents, { now: () => clock.now() });
  const assistant = new EmailAssistant({
    store,
    mailbox,
    calendar: createLocalCalendar(store.documents),
    clock,
    userName: 'Sam',
    timeZone: 'UTC',
    ...(logger ? { logger } : {}),
  });
  return { assistant, mailbox };
}
