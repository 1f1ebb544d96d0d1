/**
 * The tool result envelope ("Tool result envelope"): the one shape every read-only data
 * tool returns to the orchestrator, and the only input {@link compose} reads.
 *
 * The schema is the specified shape exactly, plus three optional, backward-compatible extras:
 * `candidates_total`, `match` and `error.retryable`. Unknown top-level keys are dropped; extra
 * keys in `query` and in each candidate are kept (extra keys are allowed).
 */
import { z } from 'zod';
import { TroupeError } from '../ports/troupeError.js';

/** The four kinds of answer a tool can give. */
export const envelopeTypes = ['success', 'disambiguation', 'empty', 'error'] as const;

/** What kind of answer the tool produced. */
export type EnvelopeType = (typeof envelopeTypes)[number];

/** One `{ field, value }` filter, as the tool applied it. */
export const envelopeFilterSchema = z.object({
  field: z.string(),
  value: z.union([z.string(), z.number(), z.boolean(), z.null()]),
});

/** One `{ field, value }` filter, as the tool applied it. */
export type EnvelopeFilter = z.infer<typeof envelopeFilterSchema>;

/** The normalised inputs the tool used. Extra keys (`part_identifier`…) are allowed and kept. */
export const envelopeQuerySchema = z.looseObject({
  entity_type: z.string(),
  entity_name: z.string().optional(),
  order_number: z.string().optional(),
  filters: z.array(envelopeFilterSchema).optional(),
});

/** The normalised inputs the tool used. Extra keys (`part_identifier`…) are allowed and kept. */
export type EnvelopeQuery = z.infer<typeof envelopeQuerySchema>;

/** One disambiguation option: an id, a human-friendly name and light context (city, status…). */
export const envelopeCandidateSchema = z.looseObject({
  id: z.union([z.string(), z.number()]),
  display_name: z.string(),
});

/** One disambiguation option: an id, a human-friendly name and light context (city, status…). */
export type EnvelopeCandidate = z.infer<typeof envelopeCandidateSchema>;

/** Which fallbacks the tool tried: exact lookup, partial (fuzzy) lookup, schema refresh and retry. */
export const envelopeAttemptsSchema = z.object({
  exact: z.boolean(),
  fuzzy: z.boolean(),
  schema_refreshed: z.boolean(),
});

/** Which fallbacks the tool tried: exact lookup, partial (fuzzy) lookup, schema refresh and retry. */
export type EnvelopeAttempts = z.infer<typeof envelopeAttemptsSchema>;

/**
 * A stable `code` and a message. The composer shows neither raw: it maps the code to a vetted
 * sentence, because a tool's message may carry database text. `retryable` (an extra) says whether
 * trying again may help.
 */
export const envelopeErrorSchema = z.object({
  code: z.string().min(1),
  message: z.string(),
  retryable: z.boolean().optional(),
});

/** A stable `code`, a message (never shown raw) and, optionally, whether a retry may help. */
export type EnvelopeError = z.infer<typeof envelopeErrorSchema>;

const count = z.number().int().nonnegative();

/**
 * The tool result envelope as a zod schema. Besides the field types it checks what each `type`
 * needs: a `success` carries at least one row (no rows is `empty`), a `disambiguation` at least
 * one candidate, an `error` its `error` object.
 */
export const toolResultEnvelopeSchema = z
  .object({
    type: z.enum(envelopeTypes),
    source: z.enum(['database', 'doc', 'action']),
    query: envelopeQuerySchema,
    /** The result set (success); each row maps a column name to its value. */
    rows: z.array(z.record(z.string(), z.unknown())).optional(),
    /** How many rows matched in all (success); may exceed `rows.length`. */
    total_rows: count.optional(),
    /** The options to pick from (disambiguation). */
    candidates: z.array(envelopeCandidateSchema).optional(),
    /** Extra: how many candidates matched in all, when more matched than `candidates` holds. */
    candidates_total: count.optional(),
    /** Extra: which step found the answer (`fuzzy`: the stored name may differ from the typed one). */
    match: z.enum(['exact', 'fuzzy']).optional(),
    attempts: envelopeAttemptsSchema,
    error: envelopeErrorSchema.optional(),
  })
  .superRefine((envelope, ctx) => {
    if (envelope.type === 'success' && (envelope.rows?.length ?? 0) === 0)
      ctx.addIssue({
        code: 'custom',
        path: ['rows'],
        message: 'needs at least one row in a success (no rows is type "empty")',
      });
    if (envelope.type === 'disambiguation' && (envelope.candidates?.length ?? 0) === 0)
      ctx.addIssue({
        code: 'custom',
        path: ['candidates'],
        message: 'needs at least one candidate in a disambiguation',
      });
    if (envelope.type === 'error' && envelope.error === undefined)
      ctx.addIssue({ code: 'custom', path: ['error'], message: 'is missing (an error needs a code)' });
  });

/** The tool result envelope every read-only data tool returns. */
export type ToolResultEnvelope = z.infer<typeof toolResultEnvelopeSchema>;

/** One problem found in an envelope: where (`candidates[0].display_name`) and what is wrong. */
export interface EnvelopeProblem {
  path: string;
  problem: string;
}

/** The result of {@link parseEnvelope}: the checked envelope, or a typed error naming each bad path. */
export type ParsedEnvelope =
  | { ok: true; envelope: ToolResultEnvelope }
  | { ok: false; error: TroupeError; problems: readonly EnvelopeProblem[] };

function pathText(path: readonly PropertyKey[]): string {
  if (path.length === 0) return 'the result';
  let text = '';
  for (const key of path) {
    if (typeof key === 'number') text += `[${key}]`;
    else text += text === '' ? String(key) : `.${String(key)}`;
  }
  return text;
}

function article(type: string): string {
  return /^[aeiou]/u.test(type) ? `an ${type}` : `a ${type}`;
}

function problemText(issue: z.core.$ZodIssue): string {
  switch (issue.code) {
    case 'invalid_type':
      return issue.message.endsWith('received undefined')
        ? 'is missing'
        : `should be ${article(issue.expected)}`;
    case 'invalid_value':
      return `should be one of ${issue.values.map((v) => String(v)).join(', ')}`;
    case 'invalid_union':
      return 'has a value of the wrong type';
    case 'too_small':
      return issue.origin === 'number' ? `should be ${issue.minimum} or more` : issue.message;
    case 'not_multiple_of':
      return 'should be a whole number';
    default:
      // Zod's own messages name the rule broken, never the value.
      return issue.message;
  }
}

/**
 * Checks `input` against {@link toolResultEnvelopeSchema}. Never throws: a bad envelope yields a
 * `TroupeError` with code `TROUPE_ENVELOPE_INVALID` whose message names each bad path and what
 * was expected there (never the values found, which may be database text).
 */
export function parseEnvelope(input: unknown): ParsedEnvelope {
  const parsed = toolResultEnvelopeSchema.safeParse(input);
  if (parsed.success) return { ok: true, envelope: parsed.data };
  const problems = parsed.error.issues.map((issue) => ({
    path: pathText(issue.path),
    problem: problemText(issue),
  }));
  const error = new TroupeError(
    'TROUPE_ENVELOPE_INVALID',
    `Invalid tool result envelope: ${problems.map((p) => `${p.path} ${p.problem}`).join('; ')}`,
    { details: { problems } },
  );
  return { ok: false, error, problems };
}
