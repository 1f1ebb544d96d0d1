/**
 * Troupe: an actor-model runtime for in-process conversational agents.
 * @packageDocumentation
 */
export { ConfigError, type ConfigProblem } from './config/configError.js';
export {
  type CoordinationConfig,
  type CoordinationVariable,
  coordinationSettings,
  defaultCoordinationConfig,
} from './config/coordinationConfig.js';
export { loadCoordinationConfig } from './config/loadCoordinationConfig.js';
export * from './machines/index.js';
