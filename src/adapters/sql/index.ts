export { asRole, type ConnectionPool, type TransactionRunner } from './asRole.js';
export { createDemoErp, type DemoErpOptions, demoErpReaderRole, demoErpSeedSql } from './demoErp.js';
export {
  createEntityLookup,
  type EntityLookup,
  type EntityLookupInput,
  type EntityLookupOptions,
  fuzzyMinimumLength,
  type LookupFilter,
} from './entityLookup.js';
export {
  alternatesOf,
  buildEntityRegistry,
  type ColumnSpec,
  defaultEntityMappings,
  type EntityMapping,
  type EntityRegistry,
  normaliseOrderNumberText,
  normalisePurchaseNumber,
} from './entityMappings.js';
export {
  type ErpConfig,
  type ErpDatabase,
  type ErpOpeners,
  erpConfigFromEnv,
  erpDatabaseFromEnv,
  erpSettings,
} from './erpFromEnv.js';
export {
  classifySqlError,
  escapeLike,
  type Queryable,
  quoteIdent,
  type SqlFailureKind,
  sqlErrorCode,
} from './sqlSupport.js';
