import type { z } from 'zod';

/**
 * Every issue of a failed zod parse as one line a person reads: `path: message` per issue, joined
 * by `; `, with `root` naming the value itself when an issue has no path (a whole body, a file).
 */
export function zodIssues(error: z.ZodError, root = '(root)'): string {
  return error.issues.map((i) => `${i.path.map(String).join('.') || root}: ${i.message}`).join('; ');
}

/** The messages alone, for a value whose name the reader already knows (one setting, one field). */
export function zodMessages(error: z.ZodError): string {
  return [...new Set(error.issues.map((i) => i.message))].join('; ');
}
