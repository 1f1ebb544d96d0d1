import type { APIEmbed, APIEmbedField } from 'discord.js';
import { clipText } from '../../delivery/clipText.js';

/**
 * Discord's embed limits: each part's own, and 6,000 characters over a message's embeds (title,
 * description, field names and values, footer text, author name). Discord refuses a message over
 * any of them (50035 Invalid Form Body), so a refused message is never shown at all.
 */
export const EMBED_LIMITS = {
  title: 256,
  description: 4_096,
  fields: 25,
  fieldName: 256,
  fieldValue: 1_024,
  footer: 2_048,
  author: 256,
  total: 6_000,
} as const;

// Shortened parts keep at least this much, so a clipped value still says what it is.
const KEEP = 60;

/** The characters of an embed Discord counts toward the 6,000 of a message. */
export function embedLength(embed: APIEmbed): number {
  let n = (embed.title ?? '').length + (embed.description ?? '').length;
  n += (embed.footer?.text ?? '').length + (embed.author?.name ?? '').length;
  for (const f of embed.fields ?? []) n += f.name.length + f.value.length;
  return n;
}

/** How {@link fitEmbed} fits an embed. */
export interface FitOptions {
  /** A line that ends the description when anything was clipped (where to read it whole). */
  pointer: string;
  /** The longest description wanted (default and at most 4,096). */
  descriptionMax?: number;
  /** Characters the embed may take (default 6,000; less when the message has other embeds). */
  budget?: number;
}

/**
 * The embed within Discord's limits: each part clipped to its own limit, then the longest of the
 * description and the field values shortened (at word boundaries, with an ellipsis) until the
 * whole fits the budget, fields dropped from the end only when that is not enough. When anything
 * was clipped, `pointer` ends the description. Lengths count UTF-16 units, never fewer than the
 * code points Discord counts.
 */
export function fitEmbed(embed: APIEmbed, options: FitOptions): APIEmbed {
  const budget = Math.min(options.budget ?? EMBED_LIMITS.total, EMBED_LIMITS.total);
  const pointer = `\n\n${options.pointer}`;
  const descriptionMax = Math.min(
    options.descriptionMax ?? EMBED_LIMITS.description,
    EMBED_LIMITS.description,
  );
  let clipped = false;
  const clip = (text: string, max: number) => {
    const out = clipText(text, max);
    if (out !== text) clipped = true;
    return out;
  };
  const fields: APIEmbedField[] = (embed.fields ?? []).map((f) => ({
    ...f,
    name: clip(f.name, EMBED_LIMITS.fieldName),
    value: clip(f.value, EMBED_LIMITS.fieldValue),
  }));
  if (fields.length > EMBED_LIMITS.fields) {
    fields.length = EMBED_LIMITS.fields;
    clipped = true;
  }
  const fitted: APIEmbed = {
    ...embed,
    ...(embed.title !== undefined ? { title: clip(embed.title, EMBED_LIMITS.title) } : {}),
    ...(embed.footer
      ? { footer: { ...embed.footer, text: clip(embed.footer.text, EMBED_LIMITS.footer) } }
      : {}),
    ...(embed.author
      ? { author: { ...embed.author, name: clip(embed.author.name, EMBED_LIMITS.author) } }
      : {}),
    // Room for the pointer is kept whether or not it is needed: a description cut later still fits.
    description: clip(embed.description ?? '', descriptionMax - pointer.length),
    ...(embed.fields ? { fields } : {}),
  };
  let over = embedLength(fitted) + pointer.length - budget;
  while (over > 0) {
    const longest = longestPart(fitted, fields);
    if (!longest || longest.length <= KEEP) break;
    const shorter = clip(longest.text, Math.max(KEEP, longest.length - over));
    longest.set(shorter);
    over -= longest.length - shorter.length;
  }
  while (over > 0 && fields.length > 0) {
    const dropped = fields.pop() as APIEmbedField;
    over -= dropped.name.length + dropped.value.length;
    clipped = true;
  }
  if (clipped || over > 0) fitted.description = `${fitted.description ?? ''}${pointer}`.trimStart();
  if (fitted.description === '') delete fitted.description;
  return fitted;
}

/** The longest of the description and the field values, with a way to replace it. */
function longestPart(
  embed: APIEmbed,
  fields: APIEmbedField[],
): { text: string; length: number; set(text: string): void } | undefined {
  let best: { text: string; length: number; set(text: string): void } | undefined;
  const consider = (text: string, set: (text: string) => void) => {
    if (!best || text.length > best.length) best = { text, length: text.length, set };
  };
  consider(embed.description ?? '', (text) => {
    embed.description = text;
  });
  for (const field of fields)
    consider(field.value, (text) => {
      field.value = text;
    });
  return best;
}
