import { compileAction } from './compileActions.js';
import type { Node, NodeTree, Transition } from './compiledNodes.js';
import { compileGuard } from './compileGuards.js';
import { STEPPER_ADVICE, type Unsupported } from './unsupportedFeature.js';
import type { TransitionReading } from './xstateInternals.js';

/**
 * Fills in every node's event transitions, eventless transitions and initial child. Events are
 * looked up by exact type, so wildcard descriptors are refused.
 */
export function compileTransitions(tree: NodeTree, unsupported: Unsupported): void {
  for (const node of tree.byId.values()) {
    for (const [event, ts] of node.def.on) {
      // xstate matches "*" and "prefix.*" against every event; the compiled engine looks events up
      // by exact type.
      if (event === '*' || event.endsWith('.*')) {
        throw unsupported(
          'a wildcard event descriptor',
          node.def.id,
          event,
          `list the event types, or ${STEPPER_ADVICE}`,
        );
      }
      node.on.set(
        event,
        ts.map((t) => compileTransition(t, node, tree, unsupported)),
      );
    }
    node.always = node.def.always.map((t) => compileTransition(t, node, tree, unsupported));
    const initialId = node.def.initialId;
    node.initial = initialId === undefined ? undefined : tree.byId.get(initialId);
  }
}

function compileTransition(
  t: TransitionReading,
  source: Node,
  tree: NodeTree,
  unsupported: Unsupported,
): Transition {
  const where = source.def.id;
  if (t.reenter) throw unsupported('a re-entering transition', where, t.eventType);
  const targets = t.targetIds.map((id) => {
    const n = tree.byId.get(id);
    if (!n) throw unsupported('a target outside the machine', where, t.eventType);
    if (n === source || n.ancestors.includes(source))
      throw unsupported('a transition into its own source', where, t.eventType);
    return n;
  });
  return {
    source,
    targets,
    guard: compileGuard(t.guard, t, where, unsupported),
    assigns: t.actions.map((a) => compileAction(a, t, where, unsupported)),
    domain: targets.length > 0 ? lcca([...targets, source], tree.root) : undefined,
  };
}

/**
 * The least common proper ancestor of the targets and the source: the transition's domain (as
 * xstate computes it for transitions that are not re-entering).
 */
function lcca(nodes: readonly Node[], root: Node): Node | undefined {
  const [first, ...rest] = nodes;
  if (!first) return undefined;
  for (const anc of first.ancestors) if (rest.every((n) => n.ancestors.includes(anc))) return anc;
  return root;
}
