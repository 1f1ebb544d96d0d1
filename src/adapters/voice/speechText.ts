import { TroupeError } from '../../ports/troupeError.js';

/** Voice ids the adapters accept: letters, digits, `-`, `+` and `_` (e.g. `en-us`, `en-us+f3`, `alloy`). */
export const VOICE_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_+-]{0,63}$/;

/** The voice id, checked against {@link VOICE_ID_PATTERN}; throws `TROUPE_SPEECH_INVALID_VOICE`. */
export function checkVoiceId(voiceId: string): string {
  if (!VOICE_ID_PATTERN.test(voiceId)) {
    throw new TroupeError(
      'TROUPE_SPEECH_INVALID_VOICE',
      `The voice id ${JSON.stringify(voiceId.slice(0, 80))} is not valid: use 1 to 64 letters, digits, "-", "+" or "_", starting with a letter or digit (for example "en-us" or "alloy").`,
      { details: { voiceId: voiceId.slice(0, 80) } },
    );
  }
  return voiceId;
}

// Control characters other than tab, line feed and carriage return (a NUL would end the text early).
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const CONTROL_CHARACTERS = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]/g;

/**
 * The text to speak: control characters replaced by spaces, surrounding whitespace trimmed, and
 * clipped to `maxChars` UTF-16 code units at the last word boundary (a single word longer than the
 * limit is cut, never inside a surrogate pair). Throws `TROUPE_SPEECH_EMPTY` when nothing is left.
 */
export function prepareSpeechText(text: string, maxChars: number): string {
  const cleaned = text.replace(CONTROL_CHARACTERS, ' ').trim();
  if (cleaned === '') {
    throw new TroupeError('TROUPE_SPEECH_EMPTY', 'There is no text to speak: the text is empty or blank.');
  }
  return clipAtWordBoundary(cleaned, maxChars);
}

/** `text` cut to at most `maxChars` code units, at the last whitespace that keeps it within the limit. */
export function clipAtWordBoundary(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  // A whitespace at index maxChars still leaves text.slice(0, maxChars) whole.
  for (let i = maxChars; i > 0; i--) {
    if (/\s/.test(text.charAt(i))) {
      const clipped = text.slice(0, i).trimEnd();
      if (clipped !== '') return clipped;
      break;
    }
  }
  let end = maxChars;
  const code = text.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff && end > 1) end -= 1;
  return text.slice(0, end);
}

/** Throws `TROUPE_SPEECH_OPTIONS_INVALID` unless `value` is an integer in `[min, max]`. */
export function checkIntegerOption(name: string, value: number, min: number, max: number): number {
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new TroupeError(
      'TROUPE_SPEECH_OPTIONS_INVALID',
      `The speech option ${name} must be a whole number from ${min} to ${max}; got ${String(value)}.`,
      { details: { option: name, value } },
    );
  }
  return value;
}
