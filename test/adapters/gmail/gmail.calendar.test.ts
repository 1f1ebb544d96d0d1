import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { eventIdFor } from '../../../src/adapters/gmail/googleCalendar.js';
import { rfc3339In, zonedInstant } from '../../../src/adapters/gmail/zonedTime.js';
import { createMemoryStore } from '../../../src/adapters/store/memory/memoryStore.js';
import type { TroupeStore } from '../../../src/ports/store.js';
import { type FakeGoogle, startFakeGoogle } from '../../support/fakeGoogle.js';
import { openTestAccount } from '../../support/gmailTestAccount.js';

let fake: FakeGoogle;
let store: TroupeStore;
beforeEach(async () => {
  fake = await startFakeGoogle();
  store = createMemoryStore();
});
afterEach(async () => {
  await fake.close();
});

describe('Google Calendar: availability', () => {
  it('asks freebusy for that local day in the explicit zone and gives working hours less the busy times, in local time', async () => {
    // 10:00–11:00 and 15:30–16:00 in Berlin (UTC+1 in November), reported in UTC as Google does.
    fake.busy = [
      { start: '2026-11-26T09:00:00Z', end: '2026-11-26T10:00:00Z' },
      { start: '2026-11-26T14:30:00Z', end: '2026-11-26T15:00:00Z' },
    ];
    const { account } = await openTestAccount(fake, store);
    const day = await account.calendar.availability('2026-11-26', 'Europe/Berlin');

    const query = fake.requests.find((r) => r.path === '/calendar/v3/freeBusy');
    expect(query?.body).toEqual({
      timeMin: '2026-11-26T00:00:00+01:00',
      timeMax: '2026-11-27T00:00:00+01:00',
      timeZone: 'Europe/Berlin',
      items: [{ id: 'primary' }],
    });
    expect(day).toEqual({
      day: '2026-11-26',
      time_zone: 'Europe/Berlin',
      free: [
        { start: '09:00', end: '10:00' },
        { start: '11:00', end: '15:30' },
        { start: '16:00', end: '17:00' },
      ],
    });
  });

  it('uses the zone’s offset of that day (summer time in July, and New York behind UTC)', async () => {
    const { account } = await openTestAccount(fake, store);
    await account.calendar.availability('2026-07-01', 'Europe/Berlin');
    await account.calendar.availability('2026-07-01', 'America/New_York');
    const bodies = fake.requests.filter((r) => r.path === '/calendar/v3/freeBusy').map((r) => r.body);
    expect(bodies[0]).toMatchObject({
      timeMin: '2026-07-01T00:00:00+02:00',
      timeMax: '2026-07-02T00:00:00+02:00',
    });
    expect(bodies[1]).toMatchObject({
      timeMin: '2026-07-01T00:00:00-04:00',
      timeMax: '2026-07-02T00:00:00-04:00',
    });
  });

  it('a day whose clocks change is 23 hours long', () => {
    const start = zonedInstant('2026-03-29', '00:00', 'Europe/Berlin');
    const end = zonedInstant('2026-03-30', '00:00', 'Europe/Berlin');
    expect((end - start) / 3_600_000).toBe(23);
    expect(rfc3339In(end, 'Europe/Berlin')).toBe('2026-03-30T00:00:00+02:00');
  });
});

describe('Google Calendar: invitations', () => {
  const meeting = {
    attendees: ['ben@customer.example'],
    subject: 'Integration call',
    durationMinutes: 45,
    day: '2026-11-26',
    startTime: '10:00',
    timeZone: 'Europe/Berlin',
  };

  it('inserts the event with sendUpdates=all as a query parameter and an id from the key; a second insert is a duplicate', async () => {
    const { account } = await openTestAccount(fake, store);
    const first = await account.calendar.invite(meeting, 'm1#1');
    expect(first).toEqual({ eventId: eventIdFor('primary', 'm1#1') });
    expect(first.eventId).toMatch(/^[a-v0-9]{5,1024}$/u);

    const insert = fake.requests.find((r) => r.path === '/calendar/v3/calendars/primary/events');
    expect(insert?.query).toEqual({ sendUpdates: 'all' });
    expect(insert?.body).toEqual({
      id: first.eventId,
      summary: 'Integration call',
      start: { dateTime: '2026-11-26T10:00:00+01:00', timeZone: 'Europe/Berlin' },
      end: { dateTime: '2026-11-26T10:45:00+01:00', timeZone: 'Europe/Berlin' },
      attendees: [{ email: 'ben@customer.example' }],
    });

    const again = await account.calendar.invite(meeting, 'm1#1');
    expect(again).toEqual({ eventId: first.eventId, duplicate: true });
    expect(fake.events.size).toBe(1);
  });

  it('an insert Google carried out but answered with a 503 is retried and reported as the one booking', async () => {
    const { account, waits } = await openTestAccount(fake, store);
    fake.inject({ method: 'POST', path: /\/events$/u, status: 503, actThenFail: true });
    const result = await account.calendar.invite(meeting, 'm1#1');
    expect(result.duplicate).toBe(true);
    expect(fake.events.size).toBe(1);
    expect(waits).toEqual([1_000]);
  });
});
