/**
 * What a person's edit of a proposed reply or invitation teaches, as one clause of a profile line
 * in the assistant's own words: the edited text itself is never copied in (a draft quotes the
 * email, and an email's words must not become a preference).
 */
export function editLesson(
  edit: { proposed: Record<string, unknown>; edited: Record<string, unknown> },
  sender: string,
  kind: 'reply' | 'invitation',
): string {
  const changed = (key: string) => JSON.stringify(edit.proposed[key]) !== JSON.stringify(edit.edited[key]);
  const clauses: string[] = [];
  if (kind === 'reply') {
    if (changed('content')) clauses.push(lengthLesson(edit.proposed.content, edit.edited.content, sender));
    if (changed('subject')) clauses.push(`check the subject of replies to ${sender} (the user changed one)`);
    if (changed('to')) clauses.push(`check who replies to ${sender} go to (the user changed it)`);
  } else {
    const minutes = edit.edited.duration_minutes;
    if (changed('duration_minutes') && Number.isInteger(minutes))
      clauses.push(`prefer ${minutes}-minute meetings with ${sender}`);
    const start = edit.edited.start_time;
    if (changed('start_time') && typeof start === 'string' && /^([01]\d|2[0-3]):[0-5]\d$/u.test(start))
      clauses.push(`prefer meetings with ${sender} starting at ${start}`);
    const weekday = weekdayOf(edit.edited.preferred_day);
    if (changed('preferred_day'))
      clauses.push(
        weekday
          ? `prefer meetings with ${sender} on a ${weekday}`
          : `check the day of meetings with ${sender}`,
      );
    if (changed('attendees')) clauses.push(`check who is invited to meetings with ${sender}`);
    if (changed('subject')) clauses.push(`check the title of invitations to ${sender}`);
    if (changed('time_zone')) clauses.push(`check the time zone of meetings with ${sender}`);
  }
  const text =
    clauses.join('; ') || `review ${kind === 'reply' ? 'replies' : 'invitations'} to ${sender} closely`;
  return `${text.charAt(0).toUpperCase()}${text.slice(1)}`;
}

/** Shorter or longer by a fifth or more; otherwise the wording changed. */
function lengthLesson(proposed: unknown, edited: unknown, sender: string): string {
  const words = (value: unknown) =>
    typeof value === 'string' ? value.split(/\s+/u).filter(Boolean).length : 0;
  const before = words(proposed);
  const after = words(edited);
  if (after <= before * 0.8) return `prefer shorter replies to ${sender}`;
  if (after >= before * 1.2) return `prefer longer, more detailed replies to ${sender}`;
  return `word replies to ${sender} the way the user rewrote one`;
}

const WEEKDAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];

function weekdayOf(day: unknown): string | undefined {
  if (typeof day !== 'string' || !/^\d{4}-\d{2}-\d{2}$/u.test(day)) return undefined;
  const at = Date.parse(`${day}T12:00:00Z`);
  return Number.isNaN(at) ? undefined : WEEKDAYS[new Date(at).getUTCDay()];
}
