/**
 * The reply to an `error` envelope from an action (`source: "action"`, a record the agent tried
 * to create): the same categories as a lookup's errors, worded for a write that did not happen.
 * The tool's `message` is never shown.
 */
import type { EntityVocabulary } from './entityVocabulary.js';
import type { EnvelopeError } from './envelope.js';
import { constraintCodes, errorFactsOf, temporaryCodes } from './errorCategory.js';
import type { ErrorReplyContent } from './errorReply.js';

/** What to tell the person when creating a record of `vocabulary`'s kind failed with `error`. */
export function actionErrorReply(error: EnvelopeError, vocabulary: EntityVocabulary): ErrorReplyContent {
  const { plural, singular } = vocabulary;
  const { errorCategory, normalised, tellAdmin } = errorFactsOf(error.code);
  const manual = vocabulary.addNewPath ? `Add it yourself in ${vocabulary.addNewPath}` : 'Add it yourself';

  if (errorCategory === 'permissions')
    return {
      errorCategory,
      summary: `I'm not allowed to create ${plural}: the database refused, so nothing was created.`,
      nextSteps: [`${manual}, or ask your administrator to let the assistant create ${plural}.`],
    };
  if (errorCategory === 'schema')
    return {
      errorCategory,
      summary: `The ${plural} table isn't laid out as I expect, so nothing was created.`,
      nextSteps: [tellAdmin(`${manual}, and`)],
    };
  if (normalised === 'UNIQUE_VIOLATION')
    return {
      errorCategory,
      summary: `A ${singular} with one of those values already exists, so nothing was created.`,
      nextSteps: [`Look the ${singular} up instead, or create it again with a different name or number.`],
    };
  if (constraintCodes.includes(normalised))
    return {
      errorCategory,
      summary: `The database rejected one of the values (it breaks a rule of the ${plural} table), so nothing was created.`,
      nextSteps: [
        `Create the ${singular} again with the values corrected.`,
        tellAdmin('If you think they were right,'),
      ],
    };
  const retryable = error.retryable ?? temporaryCodes.includes(normalised);
  return {
    errorCategory,
    summary: `Something went wrong while creating the ${singular}, so nothing was created.`,
    nextSteps: retryable
      ? ["It's probably temporary: try again in a minute.", tellAdmin('If it keeps happening,')]
      : [tellAdmin("Trying again won't help:")],
  };
}
