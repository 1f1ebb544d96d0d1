import { z } from 'zod';
import { scenarioSchema } from './scenario.js';

/** Where the generated JSON Schema lives, relative to the package root. */
export const SCENARIO_SCHEMA_PATH = 'schemas/scenario.schema.json';

/**
 * The JSON Schema of a scenario file as written by hand (`io: 'input'`: durations may be strings,
 * defaulted fields are optional). Editors use it to complete and check YAML or JSON scenarios.
 */
export function scenarioJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(scenarioSchema, { io: 'input', target: 'draft-2020-12' }) as Record<string, unknown>;
}

/** The exact text of `schemas/scenario.schema.json`: two-space JSON with a final newline. */
export function renderScenarioJsonSchema(): string {
  return `${JSON.stringify(scenarioJsonSchema(), null, 2)}\n`;
}
