import { z } from 'zod';
import { type Logger, silentLogger } from '../logging/logger.js';
import type { ObjectModel } from '../ports/objectModel.js';
import type { VersionedMemory } from '../ports/store.js';
import { TroupeError } from '../ports/troupeError.js';
import type { Email } from './emailInput.js';
import { offlineTriage } from './offlineTriage.js';
import type { TriageDecision } from './triageDecision.js';
import {
  defaultBackground,
  defaultTriagePreferences,
  memoryNamespaces,
  PREFERENCES_KEY,
  type TriagePreferences,
  triagePreferencesSchema,
} from './triagePreferences.js';
import { triagePrompt } from './triagePrompt.js';
import { applyTriageRules } from './triageRules.js';

/** What the model answers (seed 002's RouterSchema). */
export const routerSchema = z.object({
  reasoning: z.string().describe('Step-by-step reasoning behind the classification.'),
  classification: z
    .enum(['ignore', 'notify', 'respond'])
    .describe('ignore: not worth attention; notify: worth knowing, no reply; respond: needs a reply.'),
});

/** How the router decides. */
export interface TriageRouterOptions {
  /** The model to ask; without one, the offline router classifies from the same preferences. */
  model?: ObjectModel;
  /** Who the assistant works for (default: a software engineer on a product team). */
  background?: string;
  signal?: AbortSignal;
}

/**
 * Triage (seed 002): rules from the preferences decide obvious senders and subjects without a
 * model call; otherwise the model classifies with structured output `{ reasoning, classification }`
 * from the background and preferences, the email framed as untrusted data; with no model, the
 * offline router does, from the same preferences. Throws the model's `TroupeError` on failure.
 */
export async function triageEmail(
  email: Email,
  preferences: TriagePreferences,
  options: TriageRouterOptions = {},
): Promise<TriageDecision> {
  const ruled = applyTriageRules(email, preferences.rules);
  if (ruled) return ruled;
  if (!options.model) return offlineTriage(email, preferences.instructions);
  const answer = await options.model.generateObject({
    prompt: triagePrompt(email, options.background ?? defaultBackground, preferences.instructions),
    schema: routerSchema,
    schemaName: 'triage_decision',
    ...(options.signal ? { signal: options.signal } : {}),
  });
  return { classification: answer.classification, reasoning: answer.reasoning.trim(), decidedBy: 'model' };
}

/**
 * The triage preferences from memory (`email_assistant/triage_preferences`, key
 * `user_preferences`), written with the default the first time they are read. A stored value that
 * no longer fits the schema is reported and the default used (the stored one is left as it is).
 */
export async function readTriagePreferences(
  memory: VersionedMemory,
  logger: Logger = silentLogger(),
): Promise<TriagePreferences> {
  const stored = await memory.get(memoryNamespaces.triage, PREFERENCES_KEY);
  if (!stored) {
    try {
      await memory.put(memoryNamespaces.triage, PREFERENCES_KEY, defaultTriagePreferences, {
        expectedVersion: 0,
        source: 'default',
      });
      return defaultTriagePreferences;
    } catch (error) {
      // Another process wrote them first: theirs stand.
      if (!TroupeError.isInstance(error) || error.code !== 'TROUPE_STORE_CONFLICT') throw error;
      return readTriagePreferences(memory, logger);
    }
  }
  const parsed = triagePreferencesSchema.safeParse(stored.value);
  if (parsed.success) return parsed.data;
  logger.warn(
    { namespace: memoryNamespaces.triage, version: stored.version },
    'stored triage preferences do not fit the schema; using the defaults',
  );
  return defaultTriagePreferences;
}
