import { z } from 'zod';
import { modelChoiceSchema } from '../config/modelChoice.js';
import type { AvatarProfile } from '../floor/floorTypes.js';
import { ambiguousNames, avatarEmojiSchema, avatarNameSchema } from './avatarNames.js';

const name = avatarNameSchema;

/** One avatar as an embedding app or an avatars file defines it. */
export const avatarDefinitionSchema = z.object({
  id: z
    .string()
    .trim()
    .min(1)
    .max(64)
    .regex(/^[\w.-]+$/u, 'letters, digits, "_", "-" or "."'),
  name,
  emoji: avatarEmojiSchema.optional(),
  aliases: z.array(name).max(20).optional(),
  persona: z.string().trim().max(4000).optional(),
  topics: z.array(z.string().trim().min(1).max(60)).max(50).optional(),
  /** Picture shown beside the avatar's messages where the transport can (Discord webhooks). */
  pictureUrl: z.string().url().optional(),
  /** The same as `pictureUrl`, in Discord's word for it; `pictureUrl` wins when both are set. */
  avatarUrl: z.string().url().optional(),
  /** Voice for speech (engine-specific id: `en-us+f3` for espeak-ng, `alloy` for OpenAI). */
  voiceId: z.string().trim().min(1).max(64).optional(),
  /** When this avatar's answers are also spoken (see VoicePolicy). Default `on-request`. */
  voice: z.enum(['off', 'on-request', 'always']).default('on-request'),
  /** Tools the avatar may use: `entity_lookup` answers questions from the business database. */
  tools: z.array(z.enum(['entity_lookup'])).default([]),
  /**
   * The model for this avatar's turns: `provider:model` (`openai:gpt-4o-mini`), `offline`, the
   * name of a profile from `TROUPE_MODEL_PROFILES`, or `{ provider, id }`. Absent: the runtime's
   * model. Checked when the runtime starts.
   */
  model: modelChoiceSchema.optional(),
  /**
   * This avatar's own daily caps, instead of `TROUPE_AVATAR_MAX_TOKENS_PER_DAY` and
   * `TROUPE_AVATAR_MAX_COST_PER_DAY_USD` (0: no cap for it). The totals for everyone still apply.
   */
  caps: z
    .object({
      maxTokensPerDay: z.number().int().nonnegative().optional(),
      maxCostPerDayUsd: z.number().nonnegative().optional(),
    })
    .strict()
    .optional(),
  /**
   * Set by the runtime on an avatar that summoning created (absent for avatars given to it): who
   * created it, when (epoch ms), and whether a model wrote its persona or the offline template did.
   */
  created: z
    .object({
      by: z.object({ id: z.string().min(1).max(100), name: z.string().max(100) }).strict(),
      at: z.number().int().nonnegative(),
      persona: z.enum(['model', 'template']),
    })
    .strict()
    .optional(),
  /** Channels the avatar lives in from the start (residents), as `kind:id`, e.g. `terminal:lobby`. */
  residentIn: z
    .array(z.string().regex(/^[^:\s]+:\S+$/u, 'a channel as kind:id, e.g. terminal:lobby'))
    .default([]),
});

/** See {@link avatarDefinitionSchema}. */
export type AvatarDefinition = z.infer<typeof avatarDefinitionSchema>;
/** What callers may pass (defaults may be left out). */
export type AvatarDefinitionInput = z.input<typeof avatarDefinitionSchema>;

/** A list of avatars with unique ids, and no name, alias or emoji shared by two of them (any case). */
export const avatarListSchema = z.array(avatarDefinitionSchema).superRefine((avatars, ctx) => {
  const seen = new Set<string>();
  avatars.forEach((a, i) => {
    if (seen.has(a.id))
      ctx.addIssue({ code: 'custom', path: [i, 'id'], message: `duplicate avatar id "${a.id}"` });
    seen.add(a.id);
  });
  for (const problem of ambiguousNames(avatars))
    ctx.addIssue({ code: 'custom', path: [problem.index, ...problem.field], message: problem.message });
});

/** The floor's view of an avatar. */
export function toProfile(avatar: AvatarDefinition): AvatarProfile {
  return {
    id: avatar.id,
    name: avatar.name,
    ...(avatar.emoji !== undefined ? { emoji: avatar.emoji } : {}),
    ...(avatar.aliases !== undefined ? { aliases: avatar.aliases } : {}),
    ...(avatar.persona !== undefined ? { persona: avatar.persona } : {}),
    ...(avatar.topics !== undefined ? { topics: avatar.topics } : {}),
  };
}
