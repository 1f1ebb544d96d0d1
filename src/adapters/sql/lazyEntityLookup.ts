import type { Logger } from '../../logging/logger.js';
import type { LookupTool } from '../../ports/lookupTool.js';
import { createEntityLookup, type EntityLookup } from './entityLookup.js';
import { type ErpDatabase, erpDatabaseFromEnv } from './erpFromEnv.js';

/**
 * The entity lookup over the ERP database the environment names (`ERP_DATABASE_URL`, or the
 * embedded demo ERP), opened on the first lookup: a chat that never asks about vendors never
 * starts PostgreSQL. `close()` releases it if it was opened.
 */
export function lazyEntityLookup(
  env: Readonly<Record<string, string | undefined>>,
  options: { logger?: Logger } = {},
): LookupTool & { close(): Promise<void> } {
  let opened: Promise<{ erp: ErpDatabase; lookup: EntityLookup }> | undefined;
  const open = () => {
    opened ??= erpDatabaseFromEnv(env, options).then((erp) => ({
      erp,
      lookup: createEntityLookup({ db: erp.db, ...(options.logger ? { logger: options.logger } : {}) }),
    }));
    return opened;
  };
  return {
    // The embedded demo ERP runs in this process; ERP_DATABASE_URL names a server elsewhere.
    local: !env.ERP_DATABASE_URL?.trim(),
    async lookup(input) {
      const { lookup } = await open();
      return lookup.lookup(input);
    },
    async close() {
      if (opened) await (await opened).erp.close();
    },
  };
}
