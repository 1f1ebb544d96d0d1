/**
 * Text that came from data (a tool's result, a database row, a model) must not ping anyone when a
 * chat platform renders it: mass mentions (`@everyone`, `@here`) and mention syntax (`<@id>`,
 * `<@!id>`, `<@&role>`, `<#channel>`) get a zero-width space after the `@` or `<`, so they read the
 * same but are plain text. Idempotent. A transport may restrict mentions too; this does not rely
 * on that.
 */

/** The zero-width space that breaks a mention without changing how it reads. */
export const mentionBreaker = '\u200b';

const massMention = /@(everyone|here)\b/giu;
const mentionSyntax = /<([@#][!&]?\d+>)/gu;

/** `text` with every mention neutralised (see the module note). */
export function neutralizeMentions(text: string): string {
  if (!text.includes('@') && !text.includes('<#')) return text;
  return text.replace(massMention, `@${mentionBreaker}$1`).replace(mentionSyntax, `<${mentionBreaker}$1`);
}
