// What the page reads from the studio's API, typed by the server's own types: a change there that
// the page does not follow fails `npm run typecheck`. Types only; nothing here reaches the browser.
export type {
  EditField,
  PlaygroundAvatar,
  PlaygroundMessage,
  StudioActor,
  StudioAnswer,
  StudioEvent,
  StudioInterrupt,
  StudioState,
  StudioTelemetry,
} from '../src/studio/studioState.js';

/** The fields of a chart (GET /api/charts) the page reads; a test keeps them in step with the server's. */
export interface StudioChart {
  id: string;
  title: string;
  description: string;
  /** Every state is an element with id `state:<state id>`. */
  svg: string;
}

/** The page's client of the JSON API (see `createApi` in api.js). */
export interface StudioApi {
  get<T = unknown>(path: string): Promise<T>;
  post<T = unknown>(path: string, body?: unknown): Promise<T>;
}
