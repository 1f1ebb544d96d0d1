import { renderDot } from './statechartDot.js';
import { renderMermaid } from './statechartMermaid.js';
import type { StatechartJson } from './statechartModel.js';
import { renderScxml } from './statechartScxml.js';
import { renderSvg } from './statechartSvg.js';

/** The formats `troupe charts` writes. */
export const chartFormats = ['mermaid', 'dot', 'scxml', 'svg', 'json'] as const;

/** One of {@link chartFormats}. */
export type ChartFormat = (typeof chartFormats)[number];

/** The file extension each format is written with. */
export const chartExtensions: Readonly<Record<ChartFormat, string>> = {
  mermaid: 'mmd',
  dot: 'dot',
  scxml: 'scxml',
  svg: 'svg',
  json: 'json',
};

/** Renders a chart in a format that needs no layout engine (all but SVG). */
export function renderStatechartSync(chart: StatechartJson, format: Exclude<ChartFormat, 'svg'>): string {
  switch (format) {
    case 'mermaid':
      return renderMermaid(chart);
    case 'dot':
      return renderDot(chart);
    case 'scxml':
      return renderScxml(chart);
    case 'json':
      return `${JSON.stringify(chart, null, 2)}\n`;
  }
}

/** Renders a chart in any format of {@link chartFormats}; every one is drawn from the same chart. */
export async function renderStatechart(chart: StatechartJson, format: ChartFormat): Promise<string> {
  return format === 'svg' ? renderSvg(chart) : renderStatechartSync(chart, format);
}
