/**
 * The Answer Composer: turns a tool result envelope into the reply a user reads, its
 * parts, its telemetry record and the counters to increment. Pure: no I/O, no clock, no global
 * state; settings come from `options` and are read at every call.
 */
import { actionErrorReply } from './actionErrorReply.js';
import type { ComposedReply, ReplyParts } from './composedReply.js';
import { type ComposerConfigOptions, resolveComposerConfig } from './composerConfig.js';
import { disambiguationReply } from './disambiguationReply.js';
import { emptyReply } from './emptyReply.js';
import { vocabularyFor } from './entityVocabulary.js';
import {
  type EnvelopeAttempts,
  type EnvelopeProblem,
  envelopeAttemptsSchema,
  parseEnvelope,
} from './envelope.js';
import { errorReply } from './errorReply.js';
import { neutralizeParts } from './neutralizeParts.js';
import { renderText } from './renderText.js';
import { successReply } from './successReply.js';
import { type ComposerCounter, composerCounters } from './telemetry.js';

/** Options of {@link compose}: where its settings come from (see {@link ComposerConfigOptions}). */
export type ComposeOptions = ComposerConfigOptions;

/** Most envelope problems named in the reply to an invalid envelope (all of them go to `parseEnvelope`'s error). */
export const maxProblemsShown = 3;

const noAttempts: EnvelopeAttempts = { exact: false, fuzzy: false, schema_refreshed: false };

/** The input's attempt flags when they are well-formed, else all false (telemetry of a bad envelope). */
function attemptsOf(input: unknown): EnvelopeAttempts {
  try {
    if (typeof input !== 'object' || input === null) return noAttempts;
    const parsed = envelopeAttemptsSchema.safeParse((input as { attempts?: unknown }).attempts);
    return parsed.success ? parsed.data : noAttempts;
  } catch {
    return noAttempts;
  }
}

function finish(
  parts: ReplyParts,
  mode: ComposedReply['telemetry']['response_mode'],
  attempts: EnvelopeAttempts,
  candidatesCount: number,
  counters: ComposerCounter[],
): ComposedReply {
  const safe = neutralizeParts(parts);
  return {
    text: renderText(safe),
    parts: safe,
    telemetry: {
      response_mode: mode,
      attempts: { ...attempts },
      candidates_count: candidatesCount,
      provided_next_steps: (parts.nextSteps?.length ?? 0) > 0,
    },
    counters,
  };
}

function unreadable(
  detail: string,
  input: unknown,
  counters: ComposerCounter[],
  counter: ComposerCounter,
): ComposedReply {
  const parts: ReplyParts = {
    summary: `I couldn't read the lookup result (${detail}), so I don't have an answer.`,
    nextSteps: [
      'Try asking again.',
      'If it keeps happening, tell your administrator: the lookup tool returned something I can’t read.',
    ],
    severity: 'error',
    errorCategory: 'system',
  };
  return finish(parts, 'error', attemptsOf(input), 0, [...counters, counter]);
}

function problemsText(problems: readonly EnvelopeProblem[]): string {
  const named = problems.slice(0, maxProblemsShown).map((p) => `${p.path} ${p.problem}`);
  const more = problems.length - named.length;
  if (more > 0) named.push(`and ${more} more problem${more === 1 ? '' : 's'}`);
  return named.length > 0 ? named.join('; ') : 'it is not a valid envelope';
}

function composeChecked(envelope: unknown, options: ComposeOptions): ComposedReply {
  const { config, problems } = resolveComposerConfig(options);
  const counters: ComposerCounter[] = problems.length > 0 ? [composerCounters.configInvalid] : [];
  const parsed = parseEnvelope(envelope);
  if (!parsed.ok)
    return unreadable(problemsText(parsed.problems), envelope, counters, composerCounters.envelopeInvalid);

  const checked = parsed.envelope;
  const vocabulary = vocabularyFor(checked.query.entity_type);
  const candidatesCount = checked.candidates?.length ?? 0;
  const attempts = checked.attempts;
  switch (checked.type) {
    case 'success':
      return finish(
        successReply(checked, vocabulary, config),
        'success',
        attempts,
        candidatesCount,
        counters,
      );
    case 'disambiguation':
      return finish(
        disambiguationReply(checked, vocabulary, config),
        'disambiguation',
        attempts,
        candidatesCount,
        counters,
      );
    case 'empty':
      return finish(
        emptyReply(checked, vocabulary, config),
        'empty',
        attempts,
        candidatesCount,
        attempts.fuzzy ? [...counters, composerCounters.emptyWithFuzzyAttempted] : counters,
      );
    case 'error': {
      // The schema guarantees `error` on an error envelope; the fallback only satisfies the type.
      const error = checked.error ?? { code: 'UNKNOWN', message: '' };
      const content =
        checked.source === 'action'
          ? actionErrorReply(error, vocabulary)
          : errorReply(error, attempts, vocabulary);
      return finish({ ...content, severity: 'error' }, 'error', attempts, candidatesCount, counters);
    }
  }
}

/**
 * Composes the reply to a tool result envelope.
 *
 * - `success`: a summary naming the record by its stored name, and a table preview of the first
 *   `AI_RESPONSE_TABLE_PREVIEW_LIMIT` rows over their common columns;
 * - `disambiguation`: up to `AI_RESPONSE_DISAMBIG_LIMIT` numbered options and a prompt to pick;
 * - `empty`: next steps driven by the `AGENT_CAN_CREATE_*` capabilities and a "What I tried"
 *   footnote;
 * - `error`: a vetted sentence for the error's category (permissions, schema, system), never the
 *   tool's raw message.
 *
 * An envelope with `source: "action"` reports a record the agent created: a success says
 * "Created the vendor …", an error says that nothing was created and why.
 *
 * Never throws: anything that is not a valid envelope (or any unexpected failure) yields an error
 * reply with response mode `error` and the counter `envelope_invalid` (or `compose_failed`).
 *
 * @param envelope the tool's result, unchecked
 * @param options settings: `config` given directly and/or `env` (e.g. `process.env`) read now
 */
export function compose(envelope: unknown, options: ComposeOptions = {}): ComposedReply {
  try {
    return composeChecked(envelope, options);
  } catch {
    return unreadable('something unexpected went wrong', envelope, [], composerCounters.composeFailed);
  }
}
