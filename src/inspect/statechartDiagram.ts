import type { AnyStateMachine } from 'xstate';
import {
  type GuardReading,
  readMachine,
  type StateNodeReading,
  type TransitionReading,
} from '../machines/xstateInternals.js';

/** Diagram formats `statechartDiagram` can write. */
export type DiagramFormat = 'mermaid' | 'dot';

const guardName = (g: GuardReading | undefined): string | undefined => {
  if (g === undefined) return undefined;
  if (g.name !== undefined) return g.name;
  if (g.kind === 'combinator') return g.combinator;
  if (g.kind === 'predicate') return g.test.name || 'guard';
  return 'guard';
};

const label = (event: string, t: TransitionReading) => {
  const g = guardName(t.guard);
  return g ? `${event} [${g}]` : event;
};

/** Mermaid-safe id for a state node. */
const mid = (n: StateNodeReading) => n.id.replace(/[^A-Za-z0-9_]/g, '_');

/**
 * Draws a machine's statechart by walking its definition (no browser, no network): Mermaid
 * `stateDiagram-v2` for design reviews in Markdown, or Graphviz DOT. Eventless (`always`)
 * transitions are labelled with their guard; targetless transitions (context updates) are listed
 * as self-loops so every event a state handles is visible.
 */
export function statechartDiagram(machine: AnyStateMachine, format: DiagramFormat = 'mermaid'): string {
  const root = readMachine(machine).root;
  const byId = new Map(allNodes(root).map((n) => [n.id, n]));
  const nodeOf = (id: string): StateNodeReading => {
    const node = byId.get(id);
    if (!node) throw new Error(`statechartDiagram: no state node "${id}" in machine "${root.id}"`);
    return node;
  };
  return format === 'dot' ? toDot(root, nodeOf) : toMermaid(root, nodeOf);
}

/** The node and all its descendants, in document order. */
function allNodes(node: StateNodeReading): StateNodeReading[] {
  return [node, ...node.children.flatMap(allNodes)];
}

/** Finds a state node of the machine being drawn by its id. */
type NodeOf = (id: string) => StateNodeReading;

interface Edge {
  from: StateNodeReading;
  to: StateNodeReading;
  label: string;
}

function edgesOf(node: StateNodeReading, nodeOf: NodeOf): Edge[] {
  const edges: Edge[] = [];
  for (const [event, ts] of node.on) {
    ts.forEach((t, i) => {
      const targets = t.targetIds.length > 0 ? t.targetIds.map(nodeOf) : [node];
      // An unguarded transition after guarded ones is the fallback branch.
      const text = i > 0 && t.guard === undefined ? `${event} [else]` : label(event, t);
      for (const to of targets) edges.push({ from: node, to, label: text });
    });
  }
  for (const t of node.always) {
    for (const to of t.targetIds.map(nodeOf)) edges.push({ from: node, to, label: label('always', t) });
  }
  return edges;
}

function toMermaid(root: StateNodeReading, nodeOf: NodeOf): string {
  const lines = ['stateDiagram-v2'];
  const emit = (node: StateNodeReading, indent: string) => {
    const children = node.children;
    if (node.initialId !== undefined) lines.push(`${indent}[*] --> ${mid(nodeOf(node.initialId))}`);
    children.forEach((child, i) => {
      if (child.children.length > 0) {
        lines.push(`${indent}state "${child.key}" as ${mid(child)} {`);
        emit(child, `${indent}  `);
        lines.push(`${indent}}`);
      } else {
        lines.push(`${indent}state "${child.key}" as ${mid(child)}`);
      }
      if (child.type === 'final') lines.push(`${indent}${mid(child)} --> [*]`);
      if (node.type === 'parallel' && i < children.length - 1) lines.push(`${indent}--`);
    });
  };
  emit(root, '  ');
  const all = allNodes(root);
  for (const n of all)
    for (const e of edgesOf(n, nodeOf)) lines.push(`  ${mid(e.from)} --> ${mid(e.to)}: ${e.label}`);
  return `${lines.join('\n')}\n`;
}

function toDot(root: StateNodeReading, nodeOf: NodeOf): string {
  const lines = [`digraph "${root.id}" {`, '  compound=true; rankdir=LR; node [shape=box, style=rounded];'];
  const emit = (node: StateNodeReading, indent: string) => {
    for (const child of node.children) {
      if (child.children.length > 0) {
        lines.push(
          `${indent}subgraph "cluster_${child.id}" {`,
          `${indent}  label="${child.key}${child.type === 'parallel' ? ' (parallel)' : ''}";`,
        );
        lines.push(`${indent}  "${child.id}" [shape=point, style=invis];`);
        emit(child, `${indent}  `);
        lines.push(`${indent}}`);
      } else {
        lines.push(
          `${indent}"${child.id}" [label="${child.key}"${child.type === 'final' ? ', peripheries=2' : ''}];`,
        );
      }
    }
  };
  emit(root, '  ');
  const all = allNodes(root);
  for (const n of all) {
    if (n === root) continue;
    for (const e of edgesOf(n, nodeOf))
      lines.push(`  "${e.from.id}" -> "${e.to.id}" [label="${e.label.replace(/"/g, '\\"')}"];`);
  }
  lines.push('}');
  return `${lines.join('\n')}\n`;
}
