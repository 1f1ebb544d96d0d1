/**
 * The studio page (studio/*.js, type-checked by studio/tsconfig.json) reads the API's answers
 * through studio/state.d.ts. The state types are the server's own; the chart is written out there,
 * and this keeps it in step with the server's: `npm run typecheck` fails when they part.
 */
import { describe, expectTypeOf, it } from 'vitest';
import type { StudioChart } from '../../src/studio/studioCharts.js';
import type { StudioState } from '../../src/studio/studioState.js';
import type { StudioChart as PageChart, StudioState as PageState } from '../../studio/state.js';

describe("the studio page's types", () => {
  it('are the server types of what the API answers', () => {
    expectTypeOf<StudioChart>().toExtend<PageChart>();
    expectTypeOf<PageState>().toEqualTypeOf<StudioState>();
  });
});
