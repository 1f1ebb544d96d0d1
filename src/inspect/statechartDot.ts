import { stateNotes } from './statechartMermaid.js';
import { chartStates, type StatechartJson, type StatechartState } from './statechartModel.js';

/** A DOT double-quoted string. */
const q = (s: string) => `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\r?\n/g, '\\n')}"`;

/** The text of a state's box: its key, then description, entry, exit and invokes, one a line. */
const boxLabel = (s: StatechartState, suffix = '') => [`${s.key}${suffix}`, ...stateNotes(s)].join('\n');

/**
 * Draws a chart as Graphviz DOT. Every state is one element whose `id` is `state:<state id>` (a
 * node for a leaf, a cluster for a state with children, so SVG rendered from it can be queried by
 * state); a compound state's transitions attach to an invisible anchor inside its cluster; an
 * initial child is pointed at from a small dot (`initial:<id>`); final states have a double
 * border; parallel regions are dashed clusters.
 */
export function renderDot(chart: StatechartJson): string {
  const lines = [
    `digraph ${q(chart.id)} {`,
    '  compound=true; rankdir=LR; fontname="Helvetica";',
    '  node [shape=box, style=rounded, fontname="Helvetica"]; edge [fontname="Helvetica", fontsize=10];',
  ];
  const compound = (s: StatechartState) => s.states.length > 0;
  const anchor = (s: StatechartState) => (compound(s) ? `anchor:${s.id}` : s.id);
  const emit = (node: StatechartState, indent: string) => {
    lines.push(
      `${indent}subgraph ${q(`cluster_${node.id}`)} {`,
      `${indent}  id=${q(`state:${node.id}`)}; label=${q(boxLabel(node, node.type === 'parallel' ? ' (parallel)' : ''))}; style=${node.type === 'parallel' ? '"rounded,dashed"' : 'rounded'};`,
      `${indent}  ${q(anchor(node))} [id=${q(`anchor:${node.id}`)}, shape=point, style=invis, label=""];`,
    );
    if (node.initial !== null) {
      lines.push(
        `${indent}  ${q(`initial:${node.id}`)} [id=${q(`initial:${node.id}`)}, shape=circle, style=filled, fillcolor=black, width=0.15, label=""];`,
      );
    }
    for (const child of node.states) {
      if (compound(child)) emit(child, `${indent}  `);
      else {
        const shape =
          child.type === 'final'
            ? ', peripheries=2'
            : child.type === 'history'
              ? ', shape=circle, style=""'
              : '';
        const label = child.type === 'history' ? (child.history === 'deep' ? 'H*' : 'H') : boxLabel(child);
        lines.push(`${indent}  ${q(child.id)} [id=${q(`state:${child.id}`)}, label=${q(label)}${shape}];`);
      }
    }
    lines.push(`${indent}}`);
  };
  emit(chart.root, '  ');
  const states = new Map(chartStates(chart).map((s) => [s.id, s]));
  const stateOf = (id: string) => {
    const s = states.get(id);
    if (!s) throw new Error(`statechart ${chart.id}: no state "${id}"`);
    return s;
  };
  const end = (s: StatechartState, side: 'ltail' | 'lhead') =>
    compound(s) ? [`${side}=${q(`cluster_${s.id}`)}`] : [];
  for (const s of states.values()) {
    if (s.initial === null) continue;
    const to = stateOf(s.initial);
    lines.push(
      `  ${q(`initial:${s.id}`)} -> ${q(anchor(to))} [${['label=""', ...end(to, 'lhead')].join(', ')}];`,
    );
  }
  for (const t of chart.transitions) {
    const from = stateOf(t.source);
    for (const toId of t.targets.length > 0 ? t.targets : [t.source]) {
      const to = stateOf(toId);
      // A cluster cannot be both ends of one edge's clipping: a self-loop on a compound state is drawn on its anchor.
      const clip = from === to ? [] : [...end(from, 'ltail'), ...end(to, 'lhead')];
      lines.push(
        `  ${q(anchor(from))} -> ${q(anchor(to))} [${[`label=${q(t.label)}`, ...clip].join(', ')}];`,
      );
    }
  }
  lines.push('}');
  return `${lines.join('\n')}\n`;
}
