/** Opens the Gmail adapter (real googleapis) on a {@link FakeGoogle}, with simulated waits. */
import { openGmailAccount } from '../../src/adapters/gmail/gmailAccount.js';
import type { GmailCredentials } from '../../src/adapters/gmail/gmailAuth.js';
import type { Logger } from '../../src/logging/logger.js';
import type { TroupeStore } from '../../src/ports/store.js';
import type { FakeGoogle } from './fakeGoogle.js';

export const TEST_CREDENTIALS: GmailCredentials = {
  clientId: 'client-1.apps.googleusercontent.com',
  clientSecret: 'CLIENTSECRET-5ec2e7',
  refreshToken: 'REFRESHTOKEN-1',
};

/** The account, and the waits its retries asked for (none is really waited). */
export async function openTestAccount(
  fake: FakeGoogle,
  store: TroupeStore,
  options: { credentials?: Partial<GmailCredentials>; logger?: Logger; syncQuery?: string } = {},
) {
  const waits: number[] = [];
  const account = await openGmailAccount({
    credentials: { ...TEST_CREDENTIALS, ...options.credentials },
    store,
    apiUrl: fake.url,
    tokenUrl: fake.tokenUrl,
    retry: {
      sleep: async (ms) => {
        waits.push(ms);
      },
    },
    ...(options.syncQuery !== undefined ? { syncQuery: options.syncQuery } : {}),
    ...(options.logger ? { logger: options.logger } : {}),
  });
  return { account, waits };
}
