/** `[voice]` at the very start, any case, with optional whitespace inside the brackets and after. */
const VOICE_PREFIX = /^\s*\[\s*voice\s*\]\s*/iu;

/** A reply with its voice request taken off. */
export interface VoiceSplit {
  /** The text without the prefix (unchanged when there was none). */
  text: string;
  /** True when the text began with the prefix. */
  voiceRequested: boolean;
}

/**
 * The voice convention: a model asks for its reply to be spoken by starting it with `[voice]`
 * (case-insensitive, whitespace allowed). Returns the text without the prefix and whether it was
 * there. Only a leading prefix counts; `[voice]` later in the text is left alone.
 */
export function splitVoicePrefix(text: string): VoiceSplit {
  const match = VOICE_PREFIX.exec(text);
  if (!match) return { text, voiceRequested: false };
  return { text: text.slice(match[0].length), voiceRequested: true };
}
