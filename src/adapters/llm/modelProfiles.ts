import { z } from 'zod';
import { modelProfileNameSchema } from '../../config/modelChoice.js';
import { zodIssues } from '../../config/zodIssues.js';
import { httpUrl } from './httpUrl.js';

/**
 * One named model an avatar may pick with `model: <name>`: a provider, the model (default per
 * provider for openai and anthropic; required for openai-compatible) and, optionally, the server
 * (a proxy for openai or anthropic; the server for openai-compatible). Keys are never written
 * here: they come from the provider's key variable (`OPENAI_API_KEY`, `ANTHROPIC_API_KEY`,
 * `TROUPE_MODEL_API_KEY`).
 */
export const modelProfileSchema = z
  .strictObject({
    provider: z.enum(['openai', 'anthropic', 'openai-compatible', 'offline'], {
      error: 'openai, anthropic, openai-compatible or offline',
    }),
    model: z.string().trim().min(1).max(160).optional(),
    baseUrl: httpUrl.optional(),
  })
  .superRefine((profile, ctx) => {
    if (profile.provider === 'openai-compatible' && profile.model === undefined)
      ctx.addIssue({ code: 'custom', path: ['model'], message: 'required for openai-compatible' });
  });

/** See {@link modelProfileSchema}. */
export type ModelProfile = z.infer<typeof modelProfileSchema>;

const profileTable = z.record(modelProfileNameSchema, modelProfileSchema);

/**
 * `TROUPE_MODEL_PROFILES`: a JSON object of profiles by name, e.g.
 * `{"cheap":{"provider":"openai","model":"gpt-4o-mini"},"local":{"provider":"openai-compatible","model":"llama3.2","baseUrl":"http://localhost:11434/v1"}}`.
 * A problem names the profile and field (`cheap.provider: …`).
 */
export const modelProfilesSchema = z.string().transform((raw, ctx): Record<string, ModelProfile> => {
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    ctx.addIssue({
      code: 'custom',
      message: 'a JSON object of profiles, e.g. {"cheap":{"provider":"openai","model":"gpt-4o-mini"}}',
    });
    return z.NEVER;
  }
  const parsed = profileTable.safeParse(json);
  if (parsed.success) return parsed.data;
  ctx.addIssue({ code: 'custom', message: zodIssues(parsed.error, 'the profiles') });
  return z.NEVER;
});
