import type { SavedGmailToken } from '../adapters/gmail/gmailTokenFile.js';
import { terminalText } from '../delivery/terminalText.js';
import { createLogger, type Logger } from '../logging/logger.js';
import { logLevelFromEnv } from '../logging/logLevel.js';
import { describe, isTroupeError } from '../ports/troupeError.js';
import { fail } from './fail.js';

type Env = Readonly<Record<string, string | undefined>>;

/** What `troupe gmail auth` needs. */
export interface GmailAuthCommandOptions {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  env: Env;
  /** Resolves when the process is asked to stop (Ctrl-C): the wait ends, nothing is saved. */
  stopSignal?: Promise<string>;
}

/**
 * `troupe gmail auth`: authorises Troupe on a Gmail account with Google's installed-app flow on
 * a loopback redirect. It prints the consent page's URL, waits for the browser to come back to
 * 127.0.0.1, and saves the refresh token with the OAuth client (GOOGLE_CLIENT_ID,
 * GOOGLE_CLIENT_SECRET) in `<TROUPE_DATA_DIR>/gmail-token.json`, mode 0600. The token is never
 * printed or logged. Exit 0 once saved, 2 on a setting or an authorisation that failed.
 */
export async function runGmailAuth(options: GmailAuthCommandOptions): Promise<number> {
  const out = (line: string) => options.stdout(`${terminalText(line)}\n`);
  let logger: Logger;
  try {
    logger = createLogger({ level: logLevelFromEnv(options.env, 'warn') });
  } catch (error) {
    if (!isTroupeError(error)) throw error;
    return fail(options.stderr, error.code, error.message);
  }
  const { gmailSettingsFromEnv } = await import('../adapters/gmail/gmailSettings.js');
  const { runInstalledAppFlow } = await import('../adapters/gmail/gmailOAuthFlow.js');
  const { savedTokenPath, writeTokenFile } = await import('../adapters/gmail/gmailTokenFile.js');
  const controller = new AbortController();
  void options.stopSignal?.then(() => controller.abort());
  try {
    const settings = gmailSettingsFromEnv(options.env);
    const { clientId, clientSecret } = settings;
    if (!clientId || !clientSecret)
      return fail(
        options.stderr,
        'TROUPE_CONFIG_INVALID',
        `Set ${[clientId ? '' : 'GOOGLE_CLIENT_ID', clientSecret ? '' : 'GOOGLE_CLIENT_SECRET'].filter(Boolean).join(' and ')}: the OAuth client of type "Desktop app" made in the Google Cloud console (APIs & Services → Credentials; see docs/email.md, "Gmail and Calendar").`,
      );
    const path = savedTokenPath(options.env);
    const grant = await runInstalledAppFlow({
      clientId,
      clientSecret,
      ...(settings.tokenUrl ? { tokenUrl: settings.tokenUrl } : {}),
      signal: controller.signal,
      logger,
      onUrl: (url, redirectUri) => {
        out(
          'Open this URL in your browser, sign in to the Gmail account Troupe should work on, and allow access:',
        );
        out('');
        out(`  ${url}`);
        out('');
        out(`Waiting for Google to send the browser back to ${redirectUri} (Ctrl-C to stop)…`);
      },
    });
    try {
      const token: SavedGmailToken = {
        type: 'authorized_user',
        client_id: clientId,
        client_secret: clientSecret,
        refresh_token: grant.refreshToken,
        ...(grant.scope ? { scope: grant.scope } : {}),
      };
      await writeTokenFile(path, token);
    } catch (error) {
      return fail(
        options.stderr,
        'TROUPE_CONFIG_INVALID',
        `Cannot save the token in ${path} (${describe(error)}): set TROUPE_DATA_DIR to a directory you can write, then run \`troupe gmail auth\` again.`,
      );
    }
    out(`Authorised. The refresh token is saved in ${path} (readable by you only, mode 0600).`);
    for (const variable of ['GOOGLE_REFRESH_TOKEN', 'TROUPE_GMAIL_TOKEN_FILE'])
      if (options.env[variable]?.trim())
        out(
          `Note: ${variable} is set and wins over the saved token; unset it for Troupe to use the new one.`,
        );
    out('`troupe email` now reads this Gmail account. To revoke: https://myaccount.google.com/permissions');
    return 0;
  } catch (error) {
    if (isTroupeError(error)) return fail(options.stderr, error.code, error.message);
    throw error;
  }
}
