import { composeReply } from '../../email/replyMessage.js';
import type { Calendar, DayAvailability, EmailReply, Mailbox, MeetingRequest } from '../../ports/mailbox.js';
import type { DocumentStore } from '../../ports/store.js';
import { TroupeError } from '../../ports/troupeError.js';

const SENT = 'mailbox-sent';
const CLOSED = 'mailbox-closed';
const EVENTS = 'calendar-events';

/** A reply the local mailbox sent. */
export interface SentReply extends EmailReply {
  messageId: string;
  at: number;
}

/**
 * A mailbox kept in Troupe's store, for running the assistant with no email account (the sample
 * mailbox, tests): replies are recorded under their idempotency key, written once (a second send
 * with the same key returns the first), and closed emails keep their outcome label and whether
 * they count as read (only when a person saw them). A reply is composed as the message a mail
 * server would get before it is recorded, so recipients that are not email addresses are refused
 * here as by Gmail; {@link message} writes a recorded one out.
 */
export function createLocalMailbox(
  documents: DocumentStore,
  options: { now?: () => number; from?: string } = {},
): Mailbox & {
  sent(): Promise<SentReply[]>;
  /** A recorded reply as the RFC 5322 message it stands for (from `options.from`, default `me@troupe.local`). */
  message(sent: SentReply): Promise<string>;
  closed(emailId: string): Promise<string | undefined>;
} {
  const now = options.now ?? Date.now;
  const from = options.from ?? 'me@troupe.local';
  const message = (sent: SentReply) =>
    composeReply(sent, { from, messageId: sent.messageId, date: new Date(sent.at) });
  return {
    id: 'local',
    async sendReply(reply, key) {
      // The key is the document's: a second send of it is refused by the store, not read first.
      const messageId = `<${key.replace(/[^\w.-]/gu, '-')}@troupe.local>`;
      const sent: SentReply = { ...reply, messageId, at: now() };
      await message(sent); // refuses what could not be sent
      try {
        await documents.put(SENT, key, sent, { expectedVersion: 0 });
      } catch (error) {
        if (!TroupeError.isInstance(error) || error.code !== 'TROUPE_STORE_CONFLICT') throw error;
        return { messageId, duplicate: true };
      }
      return { messageId };
    },
    async close(emailId, outcome, context) {
      await documents.put(CLOSED, emailId, {
        label: `troupe/${outcome}`,
        read: context?.seenByPerson === true,
      });
    },
    async sent() {
      return (await documents.list<SentReply>(SENT)).map((d) => d.value).sort((a, b) => a.at - b.at);
    },
    message,
    async closed(emailId) {
      return (await documents.get<{ label: string }>(CLOSED, emailId))?.value.label;
    },
  };
}

/** A booked meeting in the local calendar. */
export interface LocalEvent extends MeetingRequest {
  eventId: string;
}

const toMinutes = (hhmm: string) => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5));
const toTime = (minutes: number) =>
  `${String(Math.floor(minutes / 60)).padStart(2, '0')}:${String(minutes % 60).padStart(2, '0')}`;

/**
 * A calendar kept in Troupe's store: working hours (09:00–17:00 by default) less the meetings
 * booked there, in the zone asked for (meetings are stored with their zone; a meeting booked in
 * another zone counts as busy at the same wall-clock time, which the local calendar documents as
 * its limit). Bookings are written once per idempotency key.
 */
export function createLocalCalendar(
  documents: DocumentStore,
  options: { workday?: { start: string; end: string } } = {},
): Calendar & { events(): Promise<LocalEvent[]> } {
  const workday = options.workday ?? { start: '09:00', end: '17:00' };
  return {
    async availability(day, timeZone): Promise<DayAvailability> {
      const events = (await documents.list<LocalEvent>(EVENTS))
        .map((d) => d.value)
        .filter((e) => e.day === day);
      const busy = events
        .map((e) => [toMinutes(e.startTime), toMinutes(e.startTime) + e.durationMinutes] as const)
        .sort((a, b) => a[0] - b[0]);
      const free: { start: string; end: string }[] = [];
      let cursor = toMinutes(workday.start);
      const end = toMinutes(workday.end);
      for (const [from, to] of busy) {
        if (from > cursor) free.push({ start: toTime(cursor), end: toTime(Math.min(from, end)) });
        cursor = Math.max(cursor, to);
      }
      if (cursor < end) free.push({ start: toTime(cursor), end: toTime(end) });
      return { day, time_zone: timeZone, free: free.filter((f) => f.start < f.end) };
    },
    async invite(meeting, key) {
      const existing = await documents.get<LocalEvent>(EVENTS, key);
      if (existing) return { eventId: existing.value.eventId, duplicate: true };
      const eventId = `evt-${key.replace(/[^\w.-]/gu, '-')}`;
      await documents.put(EVENTS, key, { ...meeting, eventId }, { expectedVersion: 0 });
      return { eventId };
    },
    async events() {
      return (await documents.list<LocalEvent>(EVENTS)).map((d) => d.value);
    },
  };
}
