import {
  chartStates,
  type StatechartJson,
  type StatechartState,
  type StatechartTransition,
} from './statechartModel.js';

/** The W3C SCXML namespace. */
export const SCXML_NAMESPACE = 'http://www.w3.org/2005/07/scxml';
/**
 * Troupe's namespace for what SCXML has no element for: an action known only by name
 * (`<troupe:action name="…"/>`) and a state's description (`<troupe:description>`). SCXML allows
 * elements of other namespaces there; an interpreter skips them.
 */
export const TROUPE_SCXML_NAMESPACE = 'urn:x-troupe:statechart';

const attr = (s: string) =>
  s
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/\n/g, '&#10;');
const body = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** An SCXML delay (CSS2 time): whole seconds as `45s`, anything else in `ms`. */
const scxmlDelay = (ms: number) => (ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`);

/**
 * Maps xstate state ids (any string) to unique XML ids: SCXML's `id` and `target` are `xsd:ID`s,
 * which cannot hold spaces or `#` and cannot start with a digit.
 */
function xmlIds(chart: StatechartJson): (id: string) => string {
  const ids = new Map<string, string>();
  const used = new Set<string>();
  for (const s of chartStates(chart)) {
    const base = /^[A-Za-z_]/.test(s.id)
      ? s.id.replace(/[^A-Za-z0-9_.-]/g, '_')
      : `_${s.id.replace(/[^A-Za-z0-9_.-]/g, '_')}`;
    let id = base;
    for (let n = 2; used.has(id); n++) id = `${base}_${n}`;
    used.add(id);
    ids.set(s.id, id);
  }
  return (id) => {
    const x = ids.get(id);
    if (x === undefined) throw new Error(`statechart ${chart.id}: no state "${id}"`);
    return x;
  };
}

const actions = (names: readonly string[], indent: string) =>
  names.map((n) => `${indent}<troupe:action name="${attr(n)}"/>`);

/**
 * Writes a chart as SCXML (W3C, `http://www.w3.org/2005/07/scxml`): `<state>`, `<parallel>`,
 * `<final>` and `<history>` with `initial`, `<transition event cond target>` (targetless ones have
 * no `target`, eventless ones no `event`), `<invoke>` per invoked actor, and each delayed
 * transition as SCXML's idiom for one: on entry `<send event="…" delay="45s"/>` (a named delay
 * that is a function: `delayexpr` with its name), cancelled on exit, and a transition on that
 * event. Guards are written as `cond` with the guard's name; actions and descriptions go in
 * Troupe's namespace ({@link TROUPE_SCXML_NAMESPACE}). The root state is a `<state>` (or
 * `<parallel>`) of its own so that transitions on the machine itself have a place.
 */
export function renderScxml(chart: StatechartJson): string {
  const xid = xmlIds(chart);
  const bySource = new Map<string, StatechartTransition[]>();
  for (const t of chart.transitions) bySource.set(t.source, [...(bySource.get(t.source) ?? []), t]);
  const sendId = (t: StatechartTransition) => `${t.event ?? 'after'}`;
  const lines = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<scxml xmlns="${SCXML_NAMESPACE}" xmlns:troupe="${TROUPE_SCXML_NAMESPACE}" version="1.0" name="${attr(chart.id)}" initial="${xid(chart.root.id)}">`,
  ];
  const emit = (s: StatechartState, indent: string): string[] => {
    const tag =
      s.type === 'parallel'
        ? 'parallel'
        : s.type === 'final'
          ? 'final'
          : s.type === 'history'
            ? 'history'
            : 'state';
    const attrs = [`id="${xid(s.id)}"`];
    if (tag === 'state' && s.initial !== null) attrs.push(`initial="${xid(s.initial)}"`);
    if (tag === 'history') attrs.push(`type="${s.history ?? 'shallow'}"`);
    const inner: string[] = [];
    const i2 = `${indent}  `;
    if (s.description !== null)
      inner.push(`${i2}<troupe:description>${body(s.description)}</troupe:description>`);
    const own = bySource.get(s.id) ?? [];
    // Delays are sent on entry (an `after` delay counts from entering its state) and cancelled on exit.
    const delayed = [...new Map(own.filter((t) => t.kind === 'after').map((t) => [sendId(t), t])).values()];
    const sends = delayed.map((t) => {
      const delay =
        t.delay?.ms != null
          ? `delay="${scxmlDelay(t.delay.ms)}"`
          : `delayexpr="${attr(t.delay?.name ?? '')}"`;
      return `${i2}  <send id="${attr(sendId(t))}" event="${attr(sendId(t))}" ${delay}/>`;
    });
    if (s.entry.length > 0 || sends.length > 0)
      inner.push(`${i2}<onentry>`, ...actions(s.entry, `${i2}  `), ...sends, `${i2}</onentry>`);
    if (s.exit.length > 0 || delayed.length > 0)
      inner.push(
        `${i2}<onexit>`,
        ...actions(s.exit, `${i2}  `),
        ...delayed.map((t) => `${i2}  <cancel sendid="${attr(sendId(t))}"/>`),
        `${i2}</onexit>`,
      );
    for (const inv of s.invoke) inner.push(`${i2}<invoke id="${attr(inv.id)}" src="${attr(inv.src)}"/>`);
    for (const t of own) {
      const ta: string[] = [];
      if (t.event !== null) ta.push(`event="${attr(t.event)}"`);
      if (t.guard !== null) ta.push(`cond="${attr(t.guard)}"`);
      if (t.targets.length > 0) ta.push(`target="${t.targets.map(xid).join(' ')}"`);
      const open = `${i2}<transition${ta.length > 0 ? ` ${ta.join(' ')}` : ''}`;
      if (t.actions.length === 0) inner.push(`${open}/>`);
      else inner.push(`${open}>`, ...actions(t.actions, `${i2}  `), `${i2}</transition>`);
    }
    for (const child of s.states) inner.push(...emit(child, i2));
    return inner.length === 0
      ? [`${indent}<${tag} ${attrs.join(' ')}/>`]
      : [`${indent}<${tag} ${attrs.join(' ')}>`, ...inner, `${indent}</${tag}>`];
  };
  lines.push(...emit(chart.root, '  '), '</scxml>');
  return `${lines.join('\n')}\n`;
}
