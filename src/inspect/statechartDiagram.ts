import type { AnyStateMachine } from 'xstate';
import { renderStatechartSync } from './renderStatechart.js';
import { exportStatechart } from './statechartModel.js';

/** Diagram formats `statechartDiagram` can write. */
export type DiagramFormat = 'mermaid' | 'dot' | 'scxml' | 'json';

/**
 * Draws a machine's statechart by walking its definition (no browser, no network): Mermaid
 * `stateDiagram-v2` for design reviews in Markdown, Graphviz DOT, SCXML, or the JSON every format
 * is drawn from (see {@link exportStatechart}). For SVG, use `renderStatechart(chart, 'svg')`.
 */
export function statechartDiagram(machine: AnyStateMachine, format: DiagramFormat = 'mermaid'): string {
  return renderStatechartSync(exportStatechart(machine), format);
}
