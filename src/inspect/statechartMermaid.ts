import { chartStates, type StatechartJson, type StatechartState } from './statechartModel.js';

/** Mermaid-safe id for a state. */
const mid = (id: string) => id.replace(/[^A-Za-z0-9_]/g, '_');

/** Mermaid ends a label at a newline and reads `:` and `;` as syntax. */
const text = (s: string) => s.replace(/[\r\n]+/g, ' ').replace(/[:;]/g, ',');

/** The lines Mermaid writes inside a state's box: description, entry, exit, invokes. */
export function stateNotes(s: StatechartState): string[] {
  const notes: string[] = [];
  if (s.description !== null) notes.push(s.description);
  if (s.entry.length > 0) notes.push(`entry / ${s.entry.join(', ')}`);
  if (s.exit.length > 0) notes.push(`exit / ${s.exit.join(', ')}`);
  for (const inv of s.invoke) notes.push(`invoke ${inv.src}${inv.src !== inv.id ? ` (${inv.id})` : ''}`);
  if (s.history !== null) notes.push(`history (${s.history})`);
  return notes;
}

/**
 * Draws a chart as a Mermaid `stateDiagram-v2` (paste it into Markdown): nested and parallel
 * states (regions split by `--`), `[*]` for initial and final states, a state's description,
 * entry/exit actions and invoked actors as its description lines, and every transition labelled
 * `event [guard] / actions` (targetless ones as self-loops, so every event a state handles shows).
 */
export function renderMermaid(chart: StatechartJson): string {
  const lines = ['stateDiagram-v2'];
  const emit = (node: StatechartState, indent: string) => {
    if (node.initial !== null) lines.push(`${indent}[*] --> ${mid(node.initial)}`);
    node.states.forEach((child, i) => {
      if (child.states.length > 0) {
        lines.push(`${indent}state "${text(child.key)}" as ${mid(child.id)} {`);
        emit(child, `${indent}  `);
        lines.push(`${indent}}`);
      } else {
        lines.push(`${indent}state "${text(child.key)}" as ${mid(child.id)}`);
      }
      for (const note of stateNotes(child)) lines.push(`${indent}${mid(child.id)} : ${text(note)}`);
      if (child.type === 'final') lines.push(`${indent}${mid(child.id)} --> [*]`);
      if (node.type === 'parallel' && i < node.states.length - 1) lines.push(`${indent}--`);
    });
  };
  const rootNotes = stateNotes(chart.root);
  const rootId = chart.root.id;
  // The root gets a box of its own only when something hangs on it (its own transitions or notes).
  const boxRoot = rootNotes.length > 0 || chart.transitions.some((t) => t.source === rootId);
  if (boxRoot) {
    lines.push(`  [*] --> ${mid(rootId)}`, `  state "${text(chart.root.key)}" as ${mid(rootId)} {`);
    emit(chart.root, '    ');
    lines.push('  }');
    for (const note of rootNotes) lines.push(`  ${mid(rootId)} : ${text(note)}`);
  } else {
    emit(chart.root, '  ');
  }
  const byId = new Set(chartStates(chart).map((s) => s.id));
  for (const t of chart.transitions) {
    const targets = t.targets.length > 0 ? t.targets : [t.source];
    for (const to of targets) {
      if (!byId.has(to)) throw new Error(`statechart ${chart.id}: no state "${to}"`);
      lines.push(`  ${mid(t.source)} --> ${mid(to)}: ${text(t.label)}`);
    }
  }
  return `${lines.join('\n')}\n`;
}
