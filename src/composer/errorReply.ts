/**
 * The reply to an `error` envelope: a vetted sentence chosen by the error's category and code,
 * never the tool's `message` (which may carry database text such as
 * `relation "vendormaster" does not exist`), plus next steps.
 */
import type { ErrorCategory } from './composedReply.js';
import type { EntityVocabulary } from './entityVocabulary.js';
import type { EnvelopeAttempts, EnvelopeError } from './envelope.js';
import { errorFactsOf, invalidInputCodes, temporaryCodes } from './errorCategory.js';

/** The user-facing content of an error reply. */
export interface ErrorReplyContent {
  summary: string;
  nextSteps: string[];
  errorCategory: ErrorCategory;
}

/**
 * What to tell the user about `error`, for a lookup of `vocabulary`'s records.
 *
 * - permissions: they lack access; ask an administrator for read access.
 * - schema: the database layout changed; the reply says whether a schema refresh and retry
 *   happened (`attempts.schema_refreshed`) or the refresh itself failed (`SCHEMA_REFRESH_FAILED`).
 * - system: a generic failure; retry advice when `retryable` is true (or the code is temporary),
 *   none when it is false; request problems (`INVALID_INPUT`) ask the user to rephrase.
 */
export function errorReply(
  error: EnvelopeError,
  attempts: EnvelopeAttempts,
  vocabulary: EntityVocabulary,
): ErrorReplyContent {
  const { plural, singular } = vocabulary;
  const { errorCategory, normalised, tellAdmin } = errorFactsOf(error.code);

  if (errorCategory === 'permissions')
    return {
      errorCategory,
      summary: `You don't have access to ${plural}, so I couldn't look that up.`,
      nextSteps: [`Ask your administrator to grant you read access to ${plural}.`],
    };

  if (errorCategory === 'schema') {
    if (normalised === 'SCHEMA_REFRESH_FAILED')
      return {
        errorCategory,
        summary: `The database layout seems to have changed, and refreshing my view of it failed, so I couldn't look up ${plural}.`,
        nextSteps: ['Try again in a few minutes.', tellAdmin('If it keeps failing,')],
      };
    if (attempts.schema_refreshed)
      return {
        errorCategory,
        summary: `The database layout has changed: I refreshed my view of it and retried, but still couldn't look up ${plural}.`,
        nextSteps: [tellAdmin(`The ${singular} lookup needs updating for the new layout:`)],
      };
    return {
      errorCategory,
      summary: `The database layout seems to have changed, so I couldn't look up ${plural} (I didn't refresh and retry).`,
      nextSteps: ['Try again in a moment.', tellAdmin('If it keeps failing,')],
    };
  }

  if (invalidInputCodes.includes(normalised))
    return {
      errorCategory,
      summary: `I couldn't run that ${singular} lookup: the request was incomplete or not in a form the lookup accepts.`,
      nextSteps: [`Ask again, naming the ${singular} (or its number) you're looking for.`],
    };

  const retryable = error.retryable ?? (temporaryCodes.includes(normalised) ? true : undefined);
  const summary = `Something went wrong while looking up ${plural}, so I don't have an answer.`;
  if (retryable === true)
    return {
      errorCategory,
      summary,
      nextSteps: ["It's probably temporary: try again in a minute.", tellAdmin('If it keeps happening,')],
    };
  if (retryable === false)
    return {
      errorCategory,
      summary,
      nextSteps: [tellAdmin("Trying again won't help:")],
    };
  return {
    errorCategory,
    summary,
    nextSteps: ['Try again in a moment.', tellAdmin('If it keeps happening,')],
  };
}
