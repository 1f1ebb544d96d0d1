import { z } from 'zod';
import type { Logger } from '../logging/logger.js';
import type { ObjectModel } from '../ports/objectModel.js';
import type { MemoryRecord, VersionedMemory } from '../ports/store.js';
import { recordRefusal } from './memoryRefusals.js';
import { compactByRule, describeCompaction, refusalOf } from './profileSections.js';
import { defaultProfile, profileText, withText } from './profileValue.js';
import { MAX_TRIAGE_INSTRUCTIONS, PREFERENCES_KEY } from './triagePreferences.js';

/** The longest profile kept, in characters (triage's is the schema's limit on its instructions). */
export const MAX_PROFILE = MAX_TRIAGE_INSTRUCTIONS;
/** A profile longer than this is compacted before the next update… */
export const COMPACT_AT = Math.floor(MAX_PROFILE * 0.9);
/** …to at most this, so the next several updates fit without compacting again. */
export const COMPACT_TO = Math.floor(MAX_PROFILE * 0.75);

const compactionSchema = z.object({
  user_preferences: z.string().min(1).describe('The whole compacted profile.'),
  summary: z.string().min(1).describe('One sentence: what was merged or dropped.'),
});

/**
 * Writes the profile `current` compacted to at most {@link COMPACT_TO} characters as a new version
 * (source `compacted by model: …` or `compacted by rule: …`) and returns it. With a model, the
 * model compacts it (structured output); its answer is refused like an update that drops or
 * renames a heading or moves a line between sections, or that is still too long, and the
 * refusal kept; then, as without a model, it is compacted by rule ({@link compactByRule}).
 */
export async function compactProfile(options: {
  memory: VersionedMemory;
  namespace: string;
  current: MemoryRecord;
  model?: ObjectModel;
  at: number;
  logger: Logger;
}): Promise<MemoryRecord> {
  const { memory, namespace, current, logger } = options;
  const text = profileText(current.value);
  let compacted: { text: string; source: string } | undefined;
  if (options.model) compacted = await compactByModel({ ...options, model: options.model, text });
  if (!compacted) {
    const rule = compactByRule(text, COMPACT_TO, defaultProfile(namespace));
    compacted = { text: rule.text, source: `compacted by rule: ${describeCompaction(rule, text.length)}` };
  }
  logger.info({ namespace, before: text.length, after: compacted.text.length }, 'compacted the preferences');
  return memory.put(namespace, PREFERENCES_KEY, withText(current.value, namespace, compacted.text), {
    expectedVersion: current.version,
    at: options.at,
    source: compacted.source,
  });
}

/**
 * The model's compaction of `text`, or `undefined` when it failed (logged: the profile is then
 * compacted by rule, as offline) or was refused (logged and kept beside the versions).
 */
async function compactByModel(options: {
  memory: VersionedMemory;
  namespace: string;
  current: MemoryRecord;
  model: ObjectModel;
  text: string;
  at: number;
  logger: Logger;
}): Promise<{ text: string; source: string } | undefined> {
  const { memory, namespace, current, text, logger } = options;
  let answer: z.infer<typeof compactionSchema>;
  try {
    answer = await options.model.generateObject({
      prompt: {
        system: COMPACTION_INSTRUCTIONS.replace('{max}', COMPACT_TO.toLocaleString('en')),
        messages: [{ role: 'user', content: `Profile (${namespace}):\n<profile>\n${text}\n</profile>` }],
      },
      schema: compactionSchema,
      schemaName: 'user_preferences',
    });
  } catch (error) {
    // The profile must shrink either way: a model that fails leaves it to the rule.
    logger.warn(
      { err: error, namespace },
      'the model could not compact the preferences; they are compacted by rule',
    );
    return undefined;
  }
  const next = answer.user_preferences.trim();
  const refused =
    refusalOf(text, next, { compaction: true }) ??
    (next.length > COMPACT_TO
      ? `left ${next.length.toLocaleString('en')} characters (at most ${COMPACT_TO.toLocaleString('en')})`
      : undefined);
  if (refused === undefined)
    return { text: next, source: `compacted by model: ${answer.summary.trim().slice(0, 300)}` };
  logger.warn(
    { namespace, kept: current.version, reason: refused },
    'refused the model’s compaction of the preferences; they are compacted by rule instead',
  );
  await recordRefusal(
    memory,
    namespace,
    { reason: refused, kept: current.version, kind: 'compaction' },
    options.at,
  );
  return undefined;
}

const COMPACTION_INSTRUCTIONS = [
  'You keep a profile of the user’s preferences for one part of their email assistant. It has',
  'grown near its size limit: compact it to at most {max} characters.',
  '- merge lines that say the same thing into one;',
  '- drop the oldest learned lines (those nearer the top of their section) that matter least;',
  '- keep every section heading word for word, and every line in the section it is in;',
  '- keep the sender a line names: a lesson about one sender stays about that sender only;',
  '- keep the format: section headings and “- ” lines.',
  'Answer with the whole compacted profile and a one-sentence summary of what you merged or dropped.',
].join('\n');
