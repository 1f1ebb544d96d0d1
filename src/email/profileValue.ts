import { defaultTriagePreferences, memoryNamespaces, triagePreferencesSchema } from './triagePreferences.js';

/** How the user likes emails written, before anything is learned. */
export const defaultResponsePreferences = [
  'Use a professional, concise tone; sign off with the user’s first name.',
  '- Answer the question first, then any detail.',
  '- When asked for a meeting, propose concrete times.',
].join('\n');

/** How the user likes meetings scheduled, before anything is learned. */
export const defaultCalendarPreferences = [
  'Meetings are 30 minutes unless asked otherwise.',
  '- Prefer the morning; avoid Friday afternoons.',
].join('\n');

/** The profile's stored value with `text` as its text (triage's rules are kept). */
export function withText(value: unknown, namespace: string, text: string): unknown {
  return namespace === memoryNamespaces.triage
    ? { ...(value as { rules?: unknown }), instructions: text }
    : text;
}

/** The profile a namespace starts with, as text. */
export function defaultProfile(namespace: string): string {
  return namespace === memoryNamespaces.triage
    ? defaultTriagePreferences.instructions
    : namespace === memoryNamespaces.calendar
      ? defaultCalendarPreferences
      : defaultResponsePreferences;
}

/** A profile's text: triage preferences are `{ instructions, rules }`, the others text. */
export function profileText(value: unknown): string {
  if (typeof value === 'string') return value;
  const triage = triagePreferencesSchema.safeParse(value);
  if (triage.success) return triage.data.instructions;
  // A profile stored too long (by an earlier build) is still the user's: it is compacted next.
  const instructions = (value as { instructions?: unknown } | null)?.instructions;
  return typeof instructions === 'string' && instructions.trim() !== ''
    ? instructions
    : defaultTriagePreferences.instructions;
}
