import { z } from 'zod';

/**
 * An http(s) URL without credentials, trailing slashes dropped: a model server's base URL. fetch
 * refuses a URL with a user or password, and they would be quoted in every error.
 */
export const httpUrl = z.string().transform((raw, ctx) => {
  const expected = 'an http(s) URL such as http://localhost:11434/v1';
  try {
    const url = new URL(raw.trim());
    if (
      (url.protocol === 'http:' || url.protocol === 'https:') &&
      (url.username !== '' || url.password !== '')
    ) {
      // fetch refuses a URL with credentials, and they would be quoted in every error.
      ctx.addIssue({
        code: 'custom',
        message: 'a URL without a user or password in it (put the key in TROUPE_MODEL_API_KEY)',
      });
      return z.NEVER;
    }
    if (url.protocol === 'http:' || url.protocol === 'https:') return url.href.replace(/\/+$/u, '');
  } catch {
    // fall through to the issue below
  }
  ctx.addIssue({ code: 'custom', message: expected });
  return z.NEVER;
});
