/**
 * Troupe: an actor-model runtime for in-process conversational agents.
 * @packageDocumentation
 */
export * from './actors/index.js';
export * from './adapters/llm/index.js';
// The demo ERP (PGlite) is loaded on demand: `erpDatabaseFromEnv` or `troupe/demo-erp`.
export {
  createEntityLookup,
  type EntityLookup,
  type EntityLookupInput,
} from './adapters/sql/entityLookup.js';
export { erpDatabaseFromEnv, erpSettings } from './adapters/sql/erpFromEnv.js';
export { lazyEntityLookup } from './adapters/sql/lazyEntityLookup.js';
export { MemoryHistory } from './adapters/store/memoryHistory.js';
export { MemoryOutbox } from './adapters/store/memoryOutbox.js';
export { createMemoryStore, type MemoryStoreOptions } from './adapters/store/memoryStore.js';
export { openSqliteStore, type SqliteStore, type SqliteStoreOptions } from './adapters/store/sqliteStore.js';
export { defaultDataDir, openDefaultStore, storeSettings } from './adapters/store/storeFromEnv.js';
export { splitText } from './adapters/transport/splitText.js';
export {
  type Transport,
  TransportError,
  type TransportLimits,
  type TransportMessage,
  type TransportReceipt,
} from './adapters/transport/transport.js';
export * from './adapters/voice/index.js';
export * from './composer/index.js';
export { ConfigError, type ConfigProblem } from './config/configError.js';
export {
  type CoordinationConfig,
  type CoordinationVariable,
  coordinationSettings,
  defaultCoordinationConfig,
} from './config/coordinationConfig.js';
export { loadCoordinationConfig } from './config/loadCoordinationConfig.js';
export { isTroupeError, TroupeError } from './errors/troupeError.js';
export { type DiagramFormat, statechartDiagram } from './inspect/statechartDiagram.js';
export { createLogger, type Logger, silentLogger } from './logging/logger.js';
export * from './machines/index.js';
export {
  formatTranscript,
  loadScenarioFile,
  parseScenario,
  parseScenarioText,
  runScenario,
  type Scenario,
  ScenarioError,
  type SimulationResult,
  type SimulationSummary,
  type TranscriptEntry,
} from './simulator/index.js';
