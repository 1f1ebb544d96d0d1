/**
 * Writes schemas/scenario.schema.json from the zod scenario schema. Run with `npm run schema`;
 * a test fails when the committed file and the schema drift apart.
 */
import { writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { renderScenarioJsonSchema, SCENARIO_SCHEMA_PATH } from '../src/simulator/scenarioJsonSchema.js';

const target = fileURLToPath(new URL(`../${SCENARIO_SCHEMA_PATH}`, import.meta.url));
await writeFile(target, renderScenarioJsonSchema(), 'utf8');
process.stdout.write(`wrote ${SCENARIO_SCHEMA_PATH}\n`);
