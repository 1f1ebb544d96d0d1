import type { z } from 'zod';
import type { Prompt, TokenUsage } from './model.js';

/** A request for an object of a given shape. */
export interface ObjectRequest<Schema extends z.ZodType> {
  prompt: Prompt;
  schema: Schema;
  /** A name for the output, sent to providers that use one (`triage_decision`). */
  schemaName: string;
  signal?: AbortSignal;
  /**
   * Told the call's token usage once it succeeded, as the provider reported it (without counts
   * when it reported none). A model that cannot tell never calls it.
   */
  onUsage?: (usage: TokenUsage) => void;
}

/**
 * A language model that answers with a validated object (structured output): the triage router
 * and memory updates ask through it. Failures are `TroupeError`s with `TROUPE_MODEL_*` codes; an
 * answer that does not fit the schema is `TROUPE_MODEL_FAILED`.
 */
export interface ObjectModel {
  /** `provider:model`, for logs and reports. */
  readonly id: string;
  generateObject<Schema extends z.ZodType>(request: ObjectRequest<Schema>): Promise<z.output<Schema>>;
}
