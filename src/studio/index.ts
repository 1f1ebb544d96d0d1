/**
 * Troupe Studio (`troupe/studio`): a local web app over one projection of a runtime's inspection
 * stream, kept in an `@xstate/store` store. `openStudio` runs it on embedded defaults; the parts
 * (the store, the projection, the server) can be wired to a runtime of your own.
 */
export { activeStateIds, studioMachines } from './chartStateIds.js';
export { type OpenedStudio, type OpenStudioOptions, openStudio } from './openStudio.js';
export { renderStudioCharts, type StudioChart } from './studioCharts.js';
export { studioInterrupt } from './studioInterrupt.js';
export {
  attachStudioProjection,
  type StudioProjection,
  type StudioProjectionOptions,
} from './studioProjection.js';
export {
  DEFAULT_STUDIO_PORT,
  MAX_BODY_BYTES,
  type StudioActions,
  type StudioServer,
  type StudioServerOptions,
  startStudioServer,
} from './studioServer.js';
export type * from './studioState.js';
export { STUDIO_LIMITS } from './studioState.js';
export {
  createStudioStore,
  emptyStudioState,
  playgroundKey,
  type StudioStore,
  type StudioStoreOptions,
} from './studioStore.js';
