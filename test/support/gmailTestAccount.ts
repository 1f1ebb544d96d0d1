/** Opens the Gmail adapter (real googleapis) on a {@link FakeGoogle}, with simulated waits. */
import { openGmailAccount } from '../../src/adapters/gmail/gmailAccount.js';
import type { GmailCredentials } from '../../src/adapters/gmail/gmailAuth.js';
import type { MarkReadPolicy } from '../../src/adapters/gmail/gmailSettings.js';
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
  options: {
    credentials?: Partial<GmailCredentials>;
    logger?: Logger;
    syncQuery?: string;
    markRead?: MarkReadPolicy;
    /** The adapter's clock (what the sync status records); the retries' waits are simulated anyway. */
    now?: () => number;
    /** The clock a Retry-After date is measured from. */
    retryNow?: () => number;
  } = {},
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
      ...(options.retryNow ? { now: options.retryNow } : {}),
    },
    ...(options.syncQuery !== undefined ? { syncQuery: options.syncQuery } : {}),
    ...(options.markRead ? { markRead: options.markRead } : {}),
    ...(options.now ? { now: options.now } : {}),
    ...(options.logger ? { logger: options.logger } : {}),
  });
  return { account, waits };
}
