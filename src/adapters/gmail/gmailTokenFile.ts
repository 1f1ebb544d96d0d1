import { chmod, mkdir, rename, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';

type Env = Readonly<Record<string, string | undefined>>;

/** The name of the token file `troupe gmail auth` writes in the data directory. */
export const SAVED_TOKEN_NAME = 'gmail-token.json';

/**
 * Where `troupe gmail auth` keeps the refresh token: `<TROUPE_DATA_DIR>/gmail-token.json`
 * (the data directory as the store finds it: TROUPE_DATA_DIR, else `./.troupe`).
 */
export function savedTokenPath(env: Env): string {
  return join(env.TROUPE_DATA_DIR?.trim() || './.troupe', SAVED_TOKEN_NAME);
}

/** What `troupe gmail auth` saves: an `authorized_user` file, as google-auth-library reads one. */
export interface SavedGmailToken {
  type: 'authorized_user';
  client_id: string;
  client_secret: string;
  refresh_token: string;
  scope?: string;
}

/**
 * Writes a token file readable by its owner only (mode 0600; its directory created 0700 when
 * missing): written whole to a temporary file, then renamed into place, so a crash never leaves
 * half a file and the token is never readable by others, even for a moment.
 */
export async function writeTokenFile(path: string, token: object): Promise<void> {
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const temporary = `${path}.${process.pid}.tmp`;
  await writeFile(temporary, `${JSON.stringify(token, null, 2)}\n`, { mode: 0o600 });
  // The mode given to writeFile is masked by the umask, and ignored for a file that existed.
  await chmod(temporary, 0o600);
  await rename(temporary, path);
}
