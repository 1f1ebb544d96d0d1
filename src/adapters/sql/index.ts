/**
 * `troupe/sql`: the entity lookup tool over PostgreSQL (pg) or PGlite, its mappings and the ERP
 * connection from the environment. The demo ERP (PGlite) is `troupe/demo-erp`, loaded on demand.
 * @packageDocumentation
 */
export { asRole, type ConnectionPool, type TransactionRunner, transactional } from './asRole.js';
export { createEntityCreator, type EntityCreatorOptions } from './entityCreate.js';
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
  erpFromEnv,
  erpSettings,
} from './erpFromEnv.js';
export { lazyEntityLookup } from './lazyEntityLookup.js';
export {
  classifySqlError,
  escapeLike,
  type Queryable,
  quoteIdent,
  type SqlFailureKind,
  sqlErrorCode,
} from './sqlSupport.js';
