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
  const label = labelOf(speakerNames);
  const text = label ? first.text.replace(label, '') : first.text;
  const second = splitVoicePrefix(text);
  return { text: second.text.trim(), voiceRequested: first.voiceRequested || second.voiceRequested };
}

/**
 * Label patterns of frozen names lists: the runtime passes each avatar the same frozen list with
 * every reply, so its pattern is made once (a list that may change is not kept).
 */
const labels = new WeakMap<readonly string[], RegExp | null>();

/** The pattern of a leading speaker label with one of `speakerNames`, or null when there is none. */
function labelOf(speakerNames: readonly string[]): RegExp | null {
  const known = labels.get(speakerNames);
  if (known !== undefined) return known;
  const names = speakerNames.map((n) => n.trim()).filter((n) => n !== '');
  const alternatives = names.map(escapeRegExp).join('|');
  const label =
    names.length > 0
      ? new RegExp(`^\\s*(?:\\*\\*)?(?:${alternatives})(?:\\*\\*)?\\s*:(?:\\*\\*)?\\s*`, 'iu')
      : null;
  if (Object.isFrozen(speakerNames)) labels.set(speakerNames, label);
  return label;
}
