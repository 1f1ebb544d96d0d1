import { createUsageLedger } from '../actors/usage/storedUsageLedger.js';
import type { UsageLedger } from '../actors/usage/usageLedger.js';
import { modelPricesFromEnv } from '../config/modelPrices.js';
import type { EnvRecord } from '../config/settings.js';
import type { Logger } from '../logging/logger.js';
import type { TroupeStore } from '../ports/store.js';

/**
 * The usage ledger a command records model calls in: on its store, priced by `TROUPE_MODEL_PRICES`
 * over the built-in table.
 * @throws TroupeError `TROUPE_MODEL_PRICES_INVALID` for a price table that cannot be read.
 */
export function usageLedgerFromEnv(env: EnvRecord, store: TroupeStore, logger: Logger): UsageLedger {
  return createUsageLedger({
    store: store.documents,
    prices: modelPricesFromEnv(env),
    logger: logger.child({ actor: 'usage' }),
  });
}
