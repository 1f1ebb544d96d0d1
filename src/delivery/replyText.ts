import { splitVoicePrefix, type VoiceSplit } from './voicePrefix.js';

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * Tidies what a model wrote for an avatar: takes off a `[voice]` prefix (see
 * {@link splitVoicePrefix}) and a leading speaker label with the avatar's own name (`Luna: …`,
 * `**Luna:** …`), which models copy from the `Name: message` history format, then trims. The
 * voice prefix counts before or after the label.
 */
export function cleanReplyText(raw: string, speakerNames: readonly string[]): VoiceSplit {
  const first = splitVoicePrefix(raw.trim());
  const names = speakerNames.map((n) => n.trim()).filter((n) => n !== '');
  let text = first.text;
  if (names.length > 0) {
    const alternatives = names.map(escapeRegExp).join('|');
    const label = new RegExp(`^\\s*(?:\\*\\*)?(?:${alternatives})(?:\\*\\*)?\\s*:(?:\\*\\*)?\\s*`, 'iu');
    text = text.replace(label, '');
  }
  const second = splitVoicePrefix(text);
  return { text: second.text.trim(), voiceRequested: first.voiceRequested || second.voiceRequested };
}
