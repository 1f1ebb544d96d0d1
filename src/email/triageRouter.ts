import { z } from 'zod';
import { type Logger, silentLogger } from '../logging/logger.js';
import type { ObjectModel } from '../ports/objectModel.js';
import type { VersionedMemory } from '../ports/store.js';
import { TroupeError } from '../ports/troupeError.js';
import type { Email } from './emailInput.js';
import { offlineTriage } from './offlineTriage.js';
import { compactByRule, describeCompaction } from './profileSections.js';
import type { TriageDecision } from './triageDecision.js';
import {
  defaultBackground,
  defaultTriagePreferences,
  MAX_TRIAGE_INSTRUCTIONS,
  MAX_TRIAGE_RULES,
  memoryNamespaces,
  PREFERENCES_KEY,
  type TriagePreferences,
  triagePreferencesSchema,
  triageRuleSchema,
} from './triagePreferences.js';
import { triagePrompt } from './triagePrompt.js';
import { applyTriageRules } from './triageRules.js';

/** What the model answers (the router's schema). */
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
  /** The version of the preferences (from {@link readTriageProfile}), recorded in the decision. */
  profileVersion?: number;
  signal?: AbortSignal;
}

/**
 * Triage: rules from the preferences decide obvious senders and subjects without a
 * model call; otherwise the model classifies with structured output `{ reasoning, classification }`
 * from the background and preferences, the email framed as untrusted data; with no model, the
 * offline router does, from the same preferences. Throws the model's `TroupeError` on failure.
 */
export async function triageEmail(
  email: Email,
  preferences: TriagePreferences,
  options: TriageRouterOptions = {},
): Promise<TriageDecision> {
  const version = options.profileVersion !== undefined ? { profileVersion: options.profileVersion } : {};
  const ruled = applyTriageRules(email, preferences.rules);
  if (ruled) return { ...ruled, ...version };
  if (!options.model) return { ...offlineTriage(email, preferences.instructions), ...version };
  const answer = await options.model.generateObject({
    prompt: triagePrompt(email, options.background ?? defaultBackground, preferences.instructions),
    schema: routerSchema,
    schemaName: 'triage_decision',
    ...(options.signal ? { signal: options.signal } : {}),
  });
  return {
    classification: answer.classification,
    reasoning: answer.reasoning.trim(),
    decidedBy: 'model',
    ...version,
  };
}

/** The triage preferences as read from memory, with the version they are. */
export interface TriageProfile {
  preferences: TriagePreferences;
  version: number;
}

/**
 * The triage preferences from memory (`email_assistant/triage_preferences`, key
 * `user_preferences`), written with the default the first time they are read. What is stored is
 * never swapped for the defaults when it can be used: instructions past their limit are used
 * compacted by rule (the oldest learned lines left out), rules that do not fit are left out, each
 * with a warning; only a value without usable instructions is reported and the defaults used (the
 * stored one is left as it is).
 */
export async function readTriageProfile(
  memory: VersionedMemory,
  logger: Logger = silentLogger(),
): Promise<TriageProfile> {
  const stored = await memory.get(memoryNamespaces.triage, PREFERENCES_KEY);
  if (!stored) {
    try {
      const written = await memory.put(memoryNamespaces.triage, PREFERENCES_KEY, defaultTriagePreferences, {
        expectedVersion: 0,
        source: 'default',
      });
      return { preferences: defaultTriagePreferences, version: written.version };
    } catch (error) {
      // Another process wrote them first: theirs stand.
      if (!TroupeError.isInstance(error) || error.code !== 'TROUPE_STORE_CONFLICT') throw error;
      return readTriageProfile(memory, logger);
    }
  }
  const parsed = triagePreferencesSchema.safeParse(stored.value);
  if (parsed.success) return { preferences: parsed.data, version: stored.version };
  return { preferences: usable(stored.value, stored.version, logger), version: stored.version };
}

/** See {@link readTriageProfile}: the preferences without their version. */
export async function readTriagePreferences(
  memory: VersionedMemory,
  logger: Logger = silentLogger(),
): Promise<TriagePreferences> {
  return (await readTriageProfile(memory, logger)).preferences;
}

/** What of a stored value that does not fit the schema can be used, with a warning. */
function usable(value: unknown, version: number, logger: Logger): TriagePreferences {
  const where = { namespace: memoryNamespaces.triage, version };
  const { instructions, rules } = (value ?? {}) as { instructions?: unknown; rules?: unknown };
  if (typeof instructions !== 'string' || instructions.trim() === '') {
    logger.warn(where, 'stored triage preferences do not fit the schema; using the defaults');
    return defaultTriagePreferences;
  }
  let text = instructions.trim();
  if (text.length > MAX_TRIAGE_INSTRUCTIONS) {
    const cut = compactByRule(text, MAX_TRIAGE_INSTRUCTIONS, defaultTriagePreferences.instructions);
    logger.warn(
      { ...where, what: describeCompaction(cut, text.length) },
      'stored triage preferences are past their size limit; triage reads them compacted by rule until the next update compacts them',
    );
    text = cut.text;
  }
  const kept = (Array.isArray(rules) ? rules : [])
    .map((rule) => triageRuleSchema.safeParse(rule))
    .flatMap((r) => (r.success ? [r.data] : []))
    .slice(0, MAX_TRIAGE_RULES);
  if (rules !== undefined && (!Array.isArray(rules) || kept.length < rules.length))
    logger.warn(where, 'stored triage rules that do not fit the schema are left out');
  return { instructions: text, rules: kept };
}
