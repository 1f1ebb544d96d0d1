import { createHash } from 'node:crypto';
import type { calendar_v3 } from 'googleapis/build/src/apis/calendar/v3.js';
import type { Calendar, DayAvailability, MeetingRequest } from '../../ports/mailbox.js';
import { TroupeError } from '../../ports/troupeError.js';
import type { GoogleCall } from './googleRetry.js';
import { localMinutesInto, nextDay, rfc3339In, zonedInstant } from './zonedTime.js';

/** How a {@link GoogleCalendar} is made. */
export interface GoogleCalendarOptions {
  calendar: calendar_v3.Calendar;
  call: GoogleCall;
  /** The calendar checked and booked (default `primary`). */
  calendarId?: string;
  /** Working hours, local to the zone asked for (default 09:00–17:00, as the local calendar). */
  workday?: { start: string; end: string };
}

const BASE32HEX = '0123456789abcdefghijklmnopqrstuv';

/**
 * The event id a booking with this key gets: base32hex (Calendar's alphabet for ids a client
 * chooses, 5 to 1024 characters) of a hash of the calendar and the key, the same after a restart,
 * so a second insert is refused with 409 instead of booking twice.
 */
export function eventIdFor(calendarId: string, key: string): string {
  const digest = createHash('sha256').update(`${calendarId}\n${key}`).digest();
  let bits = 0;
  let value = 0;
  let out = '';
  for (const byte of digest) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += BASE32HEX[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
    value &= (1 << bits) - 1;
  }
  return `troupe${out}`;
}

const toTime = (minutes: number) =>
  `${String(Math.floor(minutes / 60)).padStart(2, '0')}:${String(minutes % 60).padStart(2, '0')}`;
const toMinutes = (hhmm: string) => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5));

/**
 * The {@link Calendar} port over Google Calendar: availability is the working hours less the busy
 * times `freebusy.query` reports for that local day in the zone asked for; an invitation is an
 * `events.insert` with `sendUpdates=all` (Google mails the attendees) under an id derived from
 * the idempotency key, so a repeat is `duplicate: true`.
 */
export class GoogleCalendar implements Calendar {
  private readonly calendarId: string;
  private readonly workday: { start: string; end: string };

  constructor(private readonly options: GoogleCalendarOptions) {
    this.calendarId = options.calendarId ?? 'primary';
    this.workday = options.workday ?? { start: '09:00', end: '17:00' };
  }

  async availability(day: string, timeZone: string): Promise<DayAvailability> {
    const timeMin = rfc3339In(zonedInstant(day, '00:00', timeZone), timeZone);
    const timeMax = rfc3339In(zonedInstant(nextDay(day), '00:00', timeZone), timeZone);
    const answer = await this.options.call(`read the calendar's free time on ${day}`, () =>
      this.options.calendar.freebusy.query({
        requestBody: { timeMin, timeMax, timeZone, items: [{ id: this.calendarId }] },
      }),
    );
    const entry = answer.data.calendars?.[this.calendarId];
    if (entry?.errors?.length)
      throw new TroupeError(
        'TROUPE_GMAIL_FAILED',
        `Google Calendar could not read ${this.calendarId}: ${entry.errors.map((e) => e.reason).join(', ')}.`,
      );
    const busy = (entry?.busy ?? [])
      .flatMap((b) => {
        const start = Date.parse(b.start ?? '');
        const end = Date.parse(b.end ?? '');
        if (!Number.isFinite(start) || !Number.isFinite(end)) return [];
        return [[localMinutesInto(day, start, timeZone), localMinutesInto(day, end, timeZone)] as const];
      })
      .sort((a, b) => a[0] - b[0]);
    const free: { start: string; end: string }[] = [];
    let cursor = toMinutes(this.workday.start);
    const end = toMinutes(this.workday.end);
    for (const [from, to] of busy) {
      if (from > cursor) free.push({ start: toTime(cursor), end: toTime(Math.min(from, end)) });
      cursor = Math.max(cursor, to);
    }
    if (cursor < end) free.push({ start: toTime(cursor), end: toTime(end) });
    return { day, time_zone: timeZone, free: free.filter((f) => f.start < f.end) };
  }

  async invite(meeting: MeetingRequest, key: string): Promise<{ eventId: string; duplicate?: boolean }> {
    const id = eventIdFor(this.calendarId, key);
    const start = zonedInstant(meeting.day, meeting.startTime, meeting.timeZone);
    const end = start + meeting.durationMinutes * 60_000;
    try {
      await this.options.call(`book “${meeting.subject}”`, () =>
        this.options.calendar.events.insert({
          calendarId: this.calendarId,
          sendUpdates: 'all',
          requestBody: {
            id,
            summary: meeting.subject,
            start: { dateTime: rfc3339In(start, meeting.timeZone), timeZone: meeting.timeZone },
            end: { dateTime: rfc3339In(end, meeting.timeZone), timeZone: meeting.timeZone },
            attendees: meeting.attendees.map((email) => ({ email })),
          },
        }),
      );
    } catch (error) {
      // 409: an event with this id exists: booked before (a retry, or a restart after a crash).
      if (TroupeError.isInstance(error) && error.details?.status === 409)
        return { eventId: id, duplicate: true };
      throw error;
    }
    return { eventId: id };
  }
}
