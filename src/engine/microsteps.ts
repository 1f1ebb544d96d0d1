import type { Node, Transition } from './compiledNodes.js';
import { type Configuration, type Configurations, enterDefaults } from './configurations.js';
import type { ContextCopier } from './contextCopier.js';
import type { MachineArgs } from './xstateInternals.js';

/** A configuration and context after a microstep. */
export interface Stepped {
  config: Configuration;
  context: unknown;
}

/** Which transitions are enabled, and with no two exiting the same states (document order wins). */
export function selectTransitions(
  config: Configuration,
  eventType: string | null,
  args: MachineArgs,
): Transition[] {
  const chosen: Transition[] = [];
  for (const atomic of config.atomic) {
    found: for (const n of atomic.path) {
      const ts = eventType === null ? n.always : n.on.get(eventType);
      if (!ts || ts.length === 0) continue;
      for (const t of ts) {
        if (t.guard && !t.guard(args)) continue;
        if (!chosen.includes(t)) chosen.push(t);
        break found;
      }
    }
  }
  if (chosen.length < 2) return chosen;
  const exits = chosen.map((t) => exitSet(t, config));
  return chosen.filter((_, i) => {
    for (let j = 0; j < i; j++) {
      for (const n of exits[i] ?? []) if (exits[j]?.has(n)) return false;
    }
    return true;
  });
}

function exitSet(t: Transition, config: Configuration): Set<Node> {
  const domain = t.domain;
  if (!domain) return new Set();
  return new Set(config.nodes.filter((n) => n.ancestors.includes(domain)));
}

/** Takes the selected transitions together: their assigns in order, then their exits and entries. */
export function microstep(
  configs: Configurations,
  transitions: readonly Transition[],
  config: Configuration,
  context: unknown,
  event: { type: string },
  copy: ContextCopier,
): Stepped {
  const ctx = applyAssigns(transitions, context, event, copy);
  if (!transitions.some((t) => t.targets.length > 0)) return { config, context: ctx };
  const only = transitions.length === 1 ? transitions[0] : undefined;
  const known = only ? config.after.get(only) : undefined;
  if (known) return { config: known, context: ctx };
  const next = configs.of(activeAfter(transitions, config));
  if (only) config.after.set(only, next);
  return { config: next, context: ctx };
}

function applyAssigns(
  transitions: readonly Transition[],
  context: unknown,
  event: { type: string },
  copy: ContextCopier,
): unknown {
  let args: { context: Record<string, unknown>; event: { type: string } } | undefined;
  for (const t of transitions) {
    for (const assign of t.assigns) {
      // One fresh context per microstep, updated in place by each assign in turn: each sees the
      // previous one's result, as in xstate, and the caller's context is never touched.
      args ??= { context: copy(context), event };
      assign(args.context, args);
    }
  }
  return args ? args.context : context;
}

function activeAfter(transitions: readonly Transition[], config: Configuration): Set<Node> {
  const active = new Set(config.nodes);
  for (const t of transitions) {
    if (!t.domain) continue;
    for (const n of exitSet(t, config)) active.delete(n);
  }
  for (const t of transitions) {
    const domain = t.domain;
    if (!domain) continue;
    for (const target of t.targets) {
      for (const anc of target.ancestors) {
        if (anc === domain || anc.depth < domain.depth) break;
        active.add(anc);
      }
      enterDefaults(target, active);
    }
    // Regions of a parallel ancestor that nothing entered start in their defaults.
    for (const n of [...active]) {
      if (n.def.type === 'parallel')
        for (const region of n.children) if (!active.has(region)) enterDefaults(region, active);
    }
  }
  return active;
}

/** Takes eventless transitions until none is enabled (at most 100 microsteps) or the machine is done. */
export function settle(
  configs: Configurations,
  config: Configuration,
  context: unknown,
  event: { type: string },
  copy: ContextCopier,
): Stepped {
  let c = config;
  let ctx = context;
  for (let i = 0; i < 100 && !c.done && c.hasAlways; i++) {
    const ts = selectTransitions(c, null, { context: ctx, event });
    if (ts.length === 0) break;
    ({ config: c, context: ctx } = microstep(configs, ts, c, ctx, event, copy));
  }
  return { config: c, context: ctx };
}
