import { z } from 'zod';

/** The providers a model choice may name (the offline scripted model is `offline`). */
export const MODEL_PROVIDERS = ['openai', 'anthropic', 'openai-compatible', 'offline'] as const;

/** A profile name: a letter, then letters, digits, `_`, `-` or `.` (no `:`, which marks a provider). */
export const modelProfileNameSchema = z
  .string()
  .regex(/^[A-Za-z][\w.-]{0,63}$/u, 'a name of letters, digits, "_", "-" or "." starting with a letter')
  .refine((name) => name !== 'offline', '"offline" is the offline model, not a profile name');

const choiceText = z
  .string()
  .trim()
  .min(1, 'a model such as openai:gpt-4o-mini, or the name of a profile')
  .max(200)
  .refine(
    (text) => !/\s/u.test(text),
    'no spaces: provider:model (e.g. openai:gpt-4o-mini) or a profile name',
  );

const choiceObject = z.strictObject({
  provider: z.string().trim().min(1).max(40),
  id: z.string().trim().min(1).max(160),
});

/**
 * Which model an avatar's turns use, as an avatars file or `createRuntime` writes it:
 * `"<provider>:<model id>"` (`openai:gpt-4o-mini`, `openai-compatible:llama3.2:3b`), `"offline"`,
 * the name of a profile from `TROUPE_MODEL_PROFILES`, or `{ provider, id }`. Read as one text:
 * `provider:id` or the profile name. Whether the provider or profile exists is checked when the
 * runtime starts, where the models are built.
 */
export const modelChoiceSchema = z
  .union([choiceText, choiceObject], {
    error: 'provider:model (e.g. openai:gpt-4o-mini), a profile name, or { provider, id }',
  })
  .transform((choice) => (typeof choice === 'string' ? choice : `${choice.provider}:${choice.id}`));

/** What {@link modelChoiceSchema} accepts. */
export type ModelChoiceInput = z.input<typeof modelChoiceSchema>;

/** A model choice read apart: a provider and model id (the id absent for bare `offline`), or a profile. */
export type ParsedModelChoice =
  | { kind: 'provider'; provider: string; modelId?: string }
  | { kind: 'profile'; name: string };

/**
 * Splits a choice at its first `:` (model ids may hold more, as Ollama's `llama3.2:3b` does):
 * before it the provider, after it the model id. Without one it is `offline` or a profile name.
 */
export function parseModelChoice(choice: string): ParsedModelChoice {
  const colon = choice.indexOf(':');
  if (colon < 0)
    return choice === 'offline'
      ? { kind: 'provider', provider: 'offline' }
      : { kind: 'profile', name: choice };
  const modelId = choice.slice(colon + 1);
  return { kind: 'provider', provider: choice.slice(0, colon), ...(modelId !== '' ? { modelId } : {}) };
}
