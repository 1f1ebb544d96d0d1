import type { AnyStateMachine } from 'xstate';

/** Minimal view of an XState state node, as far as drawing needs it. */
interface NodeLike {
  id: string;
  key: string;
  type: 'atomic' | 'compound' | 'parallel' | 'final' | 'history';
  initial?: { target: readonly NodeLike[] };
  states: Record<string, NodeLike>;
  transitions: Map<string, readonly TransitionLike[]>;
  always?: readonly TransitionLike[];
}
interface TransitionLike {
  target?: readonly NodeLike[];
  guard?: string | { type?: string } | ((...args: never[]) => unknown);
  actions?: readonly unknown[];
}

/** Diagram formats `statechartDiagram` can write. */
export type DiagramFormat = 'mermaid' | 'dot';

const guardName = (g: TransitionLike['guard']): string | undefined => {
  if (g === undefined) return undefined;
  if (typeof g === 'string') return g;
  if (typeof g === 'function') return g.name || 'guard';
  return g.type ?? 'guard';
};

const label = (event: string, t: TransitionLike) => {
  const g = guardName(t.guard);
  return g ? `${event} [${g}]` : event;
};

/** Mermaid-safe id for a state node. */
const mid = (n: NodeLike) => n.id.replace(/[^A-Za-z0-9_]/g, '_');

/**
 * Draws a machine's statechart by walking its definition (no browser, no network): Mermaid
 * `stateDiagram-v2` for design reviews in Markdown, or Graphviz DOT. Eventless (`always`)
 * transitions are labelled with their guard; targetless transitions (context updates) are listed
 * as self-loops so every event a state handles is visible.
 */
export function statechartDiagram(machine: AnyStateMachine, format: DiagramFormat = 'mermaid'): string {
  const root = machine.root as unknown as NodeLike;
  return format === 'dot' ? toDot(root) : toMermaid(root);
}

/** The node and all its descendants, in document order. */
function allNodes(node: NodeLike): NodeLike[] {
  return [node, ...Object.values(node.states).flatMap(allNodes)];
}

function edgesOf(node: NodeLike): { from: NodeLike; to: NodeLike; label: string }[] {
  const edges: { from: NodeLike; to: NodeLike; label: string }[] = [];
  for (const [event, ts] of node.transitions) {
    ts.forEach((t, i) => {
      const targets = t.target && t.target.length > 0 ? t.target : [node];
      // An unguarded transition after guarded ones is the fallback branch.
      const text = i > 0 && t.guard === undefined ? `${event} [else]` : label(event, t);
      for (const to of targets) edges.push({ from: node, to, label: text });
    });
  }
  for (const t of node.always ?? []) {
    for (const to of t.target ?? []) edges.push({ from: node, to, label: label('always', t) });
  }
  return edges;
}

function toMermaid(root: NodeLike): string {
  const lines = ['stateDiagram-v2'];
  const emit = (node: NodeLike, indent: string) => {
    const children = Object.values(node.states);
    const initial = node.initial?.target[0];
    if (initial) lines.push(`${indent}[*] --> ${mid(initial)}`);
    children.forEach((child, i) => {
      if (Object.keys(child.states).length > 0) {
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
    for (const e of edgesOf(n)) lines.push(`  ${mid(e.from)} --> ${mid(e.to)}: ${e.label}`);
  return `${lines.join('\n')}\n`;
}

function toDot(root: NodeLike): string {
  const lines = [`digraph "${root.id}" {`, '  compound=true; rankdir=LR; node [shape=box, style=rounded];'];
  const emit = (node: NodeLike, indent: string) => {
    for (const child of Object.values(node.states)) {
      if (Object.keys(child.states).length > 0) {
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
    for (const e of edgesOf(n))
      lines.push(`  "${e.from.id}" -> "${e.to.id}" [label="${e.label.replace(/"/g, '\\"')}"];`);
  }
  lines.push('}');
  return `${lines.join('\n')}\n`;
}
