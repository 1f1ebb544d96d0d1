/** Wall-clock time in an IANA zone, for Calendar's RFC 3339 bounds (no date library needed). */

const formats = new Map<string, Intl.DateTimeFormat>();

function formatFor(timeZone: string): Intl.DateTimeFormat {
  let format = formats.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-CA', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    formats.set(timeZone, format);
  }
  return format;
}

/** The wall clock at `instant` in `timeZone`, as epoch ms of the same wall time in UTC. */
function wallClock(instant: number, timeZone: string): number {
  const parts = formatFor(timeZone).formatToParts(new Date(instant));
  const get = (type: string) => Number(parts.find((p) => p.type === type)?.value ?? 0);
  return Date.UTC(get('year'), get('month') - 1, get('day'), get('hour'), get('minute'), get('second'));
}

/** The zone's offset from UTC at `instant`, in minutes (Berlin in winter: 60). */
export function zoneOffsetMinutes(instant: number, timeZone: string): number {
  return Math.round((wallClock(instant, timeZone) - Math.floor(instant / 1000) * 1000) / 60_000);
}

/**
 * The instant a wall-clock time (`YYYY-MM-DD`, `HH:MM`) happens in `timeZone`. In a gap (the
 * hour skipped when clocks go forward) it is the time after the gap, as Calendar reads it.
 */
export function zonedInstant(day: string, time: string, timeZone: string): number {
  const [year, month, date] = day.split('-').map(Number) as [number, number, number];
  const [hour, minute] = time.split(':').map(Number) as [number, number];
  const asUtc = Date.UTC(year, month - 1, date, hour, minute);
  let instant = asUtc - zoneOffsetMinutes(asUtc, timeZone) * 60_000;
  // The offset at the guess may differ from the offset at the answer (a change in between).
  instant = asUtc - zoneOffsetMinutes(instant, timeZone) * 60_000;
  return instant;
}

/** `2026-11-26T00:00:00+01:00`: the instant written in the zone's wall clock, with its offset. */
export function rfc3339In(instant: number, timeZone: string): string {
  const offset = zoneOffsetMinutes(instant, timeZone);
  const wall = new Date(instant + offset * 60_000).toISOString().slice(0, 19);
  const sign = offset < 0 ? '-' : '+';
  const abs = Math.abs(offset);
  return `${wall}${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
}

/** Minutes from the start of `day` (local) to `instant`, on the zone's wall clock (may be < 0 or > 1440). */
export function localMinutesInto(day: string, instant: number, timeZone: string): number {
  const [year, month, date] = day.split('-').map(Number) as [number, number, number];
  return Math.round((wallClock(instant, timeZone) - Date.UTC(year, month - 1, date)) / 60_000);
}

/** The day after `day` (`YYYY-MM-DD`). */
export function nextDay(day: string): string {
  const [year, month, date] = day.split('-').map(Number) as [number, number, number];
  return new Date(Date.UTC(year, month - 1, date + 1)).toISOString().slice(0, 10);
}
