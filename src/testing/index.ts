/**
 * `troupe/testing`: deterministic runtimes for tests — a simulated clock, the in-memory store,
 * the offline scripted model, a mock model and a recording transport.
 * @packageDocumentation
 */
export { SimulatedClock } from '../actors/clock.js';
export {
  advanceOnClock,
  DEFAULT_SETTLE_LIMIT_MS,
  type SettleOptions,
  settleOnClock,
} from '../actors/settleOnClock.js';
export { MemoryHistory } from '../adapters/store/memory/memoryHistory.js';
export { MemoryOutbox } from '../adapters/store/memory/memoryOutbox.js';
export {
  createTestRuntime,
  type TestRuntime,
  type TestRuntimeOptions,
  testAvatars,
} from './createTestRuntime.js';
export {
  type MockModel,
  type MockModelOptions,
  type MockReplies,
  type MockReply,
  type MockToolCall,
  type MockToolResult,
  mockModel,
} from './mockModel.js';
export { type InjectedFailure, type RecordedMessage, RecordingTransport } from './recordingTransport.js';
