import type { z } from 'zod';

/** How {@link zodIssues} writes each issue. */
export interface ZodIssuesFormat {
  /** Put before every non-empty path (`avatars.`, `--`). */
  prefix?: string;
  /** Between the path and the message (default `: `). */
  separator?: string;
  /** Most issues written (default all). */
  limit?: number;
}

/**
 * Every issue of a failed zod parse as one line a person reads: `path: message` per issue, joined
 * by `; `, with `root` naming the value itself when an issue has no path (a whole body, a file).
 */
export function zodIssues(
  error: { readonly issues: readonly z.core.$ZodIssue[] },
  root = '(root)',
  format: ZodIssuesFormat = {},
): string {
  const { prefix = '', separator = ': ', limit } = format;
  const issues = limit === undefined ? error.issues : error.issues.slice(0, limit);
  return issues
    .map((i) => {
      const path = i.path.map(String).join('.');
      return `${path ? `${prefix}${path}` : root}${separator}${i.message}`;
    })
    .join('; ');
}

/** The messages alone, for a value whose name the reader already knows (one setting, one field). */
export function zodMessages(error: z.ZodError): string {
  return [...new Set(error.issues.map((i) => i.message))].join('; ');
}
