import type { Logger } from '../../logging/logger.js';
import type { LookupTool } from '../../ports/lookupTool.js';
import type { RecordCreator } from '../../ports/recordCreator.js';
import { createEntityCreator } from './entityCreate.js';
import { createEntityLookup, type EntityLookup } from './entityLookup.js';
import { type ErpDatabase, erpDatabaseFromEnv } from './erpFromEnv.js';

/**
 * The entity lookup over the ERP database the environment names (`ERP_DATABASE_URL`, or the
 * embedded demo ERP), opened on the first lookup: a chat that never asks about vendors never
 * starts PostgreSQL. Lookups and creations run as the agent (the demo ERP's `erp_agent`, or the
 * connection's user). `close()` releases it if it was opened.
 */
export function lazyEntityLookup(
  env: Readonly<Record<string, string | undefined>>,
  options: { logger?: Logger } = {},
): LookupTool & { close(): Promise<void> } {
  let opened: Promise<{ erp: ErpDatabase; lookup: EntityLookup; creator: RecordCreator }> | undefined;
  const logged = options.logger ? { logger: options.logger } : {};
  const open = () => {
    opened ??= erpDatabaseFromEnv(env, options).then((erp) => ({
      erp,
      lookup: createEntityLookup({ db: erp.agent ?? erp.db, ...logged }),
      creator: createEntityCreator({ db: erp.agent ?? erp.db, ...logged }),
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
    creator: {
      formFor: async (entityType) => (await open()).creator.formFor(entityType),
      create: async (entityType, values) => (await open()).creator.create(entityType, values),
    },
    async close() {
      if (opened) await (await opened).erp.close();
    },
  };
}
