import { renderDot } from './statechartDot.js';
import type { StatechartJson } from './statechartModel.js';

type Viz = Awaited<ReturnType<typeof import('@viz-js/viz').instance>>;
let viz: Promise<Viz> | undefined;

/**
 * Renders a chart as SVG in this process: its DOT ({@link renderDot}) laid out by Graphviz compiled
 * to WebAssembly (`@viz-js/viz`, which carries the WebAssembly inside the package: no browser, no
 * download). Each state is a `<g>` whose id is `state:<state id>`. Graphviz loads on the first call.
 */
export async function renderSvg(chart: StatechartJson): Promise<string> {
  viz ??= import('@viz-js/viz').then((m) => m.instance());
  return (await viz).renderString(renderDot(chart), { format: 'svg' });
}
