/**
 * The usage ledger: every model call's tokens, characters and estimated cost, stored per hour
 * through the document store and summed per UTC day (what the daily caps compare with); the
 * meters that record a model's calls; the price table.
 * @packageDocumentation
 */
export {
  builtInModelPrices,
  costOf,
  type ModelPrice,
  type ModelPrices,
  modelPricesFromEnv,
  PRICES_AS_OF,
  withOperatorPrices,
} from '../../config/modelPrices.js';
export type {
  ModelCallUsage,
  UsageGrouping,
  UsagePurpose,
  UsageRow,
  UsageSpender,
  UsageTotals,
} from '../../ports/usage.js';
export { type EmailUsageMeter, meteredAgentModel, meteredObjectModel } from './meteredEmailModels.js';
export { meteredTurnModel } from './meteredTurnModel.js';
export { createUsageLedger, type StoredUsageLedgerOptions, USAGE_RETENTION_MS } from './storedUsageLedger.js';
export type { UsageLedger, UsageReportOptions } from './usageLedger.js';
