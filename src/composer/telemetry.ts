/**
 * The telemetry record every composed reply carries ("Telemetry"), exactly the specified
 * shape, and the names of the counters a composition may ask its caller to increment.
 */
import { z } from 'zod';
import { envelopeAttemptsSchema } from './envelope.js';

/**
 * The specified telemetry record: the reply's mode, the envelope's attempt flags, how many
 * candidates the envelope carried (`candidates.length`, 0 when none) and whether the reply
 * offered next steps. Callers write it to their analytics log as is.
 */
export const composeTelemetrySchema = z.strictObject({
  response_mode: z.enum(['success', 'disambiguation', 'empty', 'error']),
  attempts: envelopeAttemptsSchema,
  candidates_count: z.number().int().nonnegative(),
  provided_next_steps: z.boolean(),
});

/** The specified telemetry record for one composed reply. */
export type ComposeTelemetry = z.infer<typeof composeTelemetrySchema>;

/**
 * Counters a composition may report in `counters` (the caller increments them):
 * - `empty_with_fuzzy_attempted`: an empty result although a partial (fuzzy) match was tried,
 *   the specified residual-miss counter;
 * - `envelope_invalid`: the tool returned something that is not a valid envelope;
 * - `composer_config_invalid`: a composer variable in the environment was invalid and its
 *   default was used for this composition;
 * - `compose_failed`: composing failed unexpectedly (a bug, or an input that is not plain data);
 *   the user got a generic error reply.
 */
export const composerCounters = {
  emptyWithFuzzyAttempted: 'empty_with_fuzzy_attempted',
  envelopeInvalid: 'envelope_invalid',
  configInvalid: 'composer_config_invalid',
  composeFailed: 'compose_failed',
} as const;

/** The name of one composer counter. */
export type ComposerCounter = (typeof composerCounters)[keyof typeof composerCounters];

/**
 * The record a create flow leaves when it ends: the entity type, the reply's mode, and the outcome
 * (`created`; `failed`: the database refused or broke; `refused`: the capability is off or the
 * tool cannot create; `cancelled`: the person said no). `error_category` is the failure's category.
 */
export const createTelemetrySchema = z.strictObject({
  action: z.literal('create'),
  entity_type: z.string(),
  response_mode: z.enum(['success', 'error', 'cancelled']),
  outcome: z.enum(['created', 'failed', 'refused', 'cancelled']),
  error_category: z.enum(['permissions', 'schema', 'system']).optional(),
});

/** The record a create flow leaves when it ends. */
export type CreateTelemetry = z.infer<typeof createTelemetrySchema>;
