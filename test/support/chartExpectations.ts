import { DOMParser, type Element } from '@xmldom/xmldom';
import { expect } from 'vitest';
import type { AnyStateMachine } from 'xstate';
import type { StatechartJson } from '../../src/inspect/statechartModel.js';

/**
 * What a chart must show, read straight from a machine's config (not through Troupe's reading of
 * xstate), so a drawing that drops a state or a transition fails whatever the export does.
 */
export interface ExpectedChart {
  /** Every state id, the root included. */
  states: Set<string>;
  /** Ids of states that have children (drawn as clusters). */
  compound: Set<string>;
  /** One entry per transition and target: the source, what fires it, and where it goes (itself when targetless). */
  edges: { source: string; trigger: string; target: string }[];
}

/** The test's own spelling of a delay, independent of the exporter's: 45000 → 45s, 1500 → 1500ms. */
export const delayWords = (ms: number) =>
  ms >= 60_000 && ms % 60_000 === 0 ? `${ms / 60_000}min` : ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`;

const list = (v: unknown): unknown[] => (v === undefined ? [] : Array.isArray(v) ? v : [v]);

interface StateConfig {
  id?: string;
  states?: Record<string, StateConfig>;
  on?: Record<string, unknown>;
  after?: Record<string, unknown>;
  always?: unknown;
  onDone?: unknown;
  invoke?: unknown;
}

/** Reads the expected chart from `machine.config` (what the author wrote). */
export function expectedFromConfig(machine: AnyStateMachine): ExpectedChart {
  const config = machine.config as StateConfig;
  const delays = (machine.implementations as { delays?: Record<string, unknown> }).delays ?? {};
  const states = new Set<string>();
  const compound = new Set<string>();
  const edges: ExpectedChart['edges'] = [];
  const walk = (node: StateConfig, id: string, parentId: string | undefined) => {
    states.add(id);
    const children = Object.entries(node.states ?? {});
    if (children.length > 0) compound.add(id);
    const resolve = (target: string) =>
      target.startsWith('#')
        ? target.slice(1)
        : target.startsWith('.')
          ? `${id}${target}`
          : `${parentId}.${target}`;
    const add = (trigger: string, transitions: unknown) => {
      for (const t of list(transitions)) {
        const raw = typeof t === 'string' ? t : (t as { target?: unknown }).target;
        const targets = list(raw).map((x) => resolve(x as string));
        for (const target of targets.length > 0 ? targets : [id]) edges.push({ source: id, trigger, target });
      }
    };
    for (const [event, t] of Object.entries(node.on ?? {})) add(event, t);
    for (const [delay, t] of Object.entries(node.after ?? {})) {
      const named = delays[delay];
      const words = !Number.isNaN(Number(delay))
        ? delayWords(Number(delay))
        : typeof named === 'number'
          ? delayWords(named)
          : delay;
      add(`after ${words}`, t);
    }
    add('always', node.always);
    if (node.onDone !== undefined) add(`xstate.done.state.${id}`, node.onDone);
    for (const inv of list(node.invoke) as { id?: string; onDone?: unknown; onError?: unknown }[]) {
      if (inv.onDone !== undefined) add(`xstate.done.actor.${inv.id}`, inv.onDone);
      if (inv.onError !== undefined) add(`xstate.error.actor.${inv.id}`, inv.onError);
    }
    for (const [key, child] of children) walk(child, child.id ?? `${id}.${key}`, id);
  };
  walk(config, machine.id, undefined);
  return { states, compound, edges };
}

/** The same shape, read from the JSON export. */
export function expectedFromJson(chart: StatechartJson): ExpectedChart {
  const states = new Set<string>();
  const compound = new Set<string>();
  const walk = (s: StatechartJson['root']) => {
    states.add(s.id);
    if (s.states.length > 0) compound.add(s.id);
    s.states.forEach(walk);
  };
  walk(chart.root);
  const edges = chart.transitions.flatMap((t) => {
    const trigger =
      t.kind === 'always'
        ? 'always'
        : t.kind === 'after'
          ? `after ${t.delay?.ms != null ? delayWords(t.delay.ms) : t.delay?.name}`
          : (t.event ?? '');
    return (t.targets.length > 0 ? t.targets : [t.source]).map((target) => ({
      source: t.source,
      trigger,
      target,
    }));
  });
  return { states, compound, edges };
}

const key = (e: ExpectedChart['edges'][number]) => `${e.source} --${e.trigger}--> ${e.target}`;
/** Edges as sorted keys, so two readings compare as multisets. */
export const edgeKeys = (edges: ExpectedChart['edges']) => edges.map(key).sort();

const mid = (id: string) => id.replace(/[^A-Za-z0-9_]/g, '_');

/** Every state and every edge (with its trigger at the start of its label) is in the Mermaid. */
export function expectMermaidShows(mermaid: string, expected: ExpectedChart, rootId: string): void {
  expect(mermaid.startsWith('stateDiagram-v2\n')).toBe(true);
  for (const id of expected.states) if (id !== rootId) expect(mermaid).toContain(` as ${mid(id)}`);
  const lines = mermaid.split('\n').filter((l) => /^\s+\S+ --> \S+: /.test(l));
  for (const e of expected.edges) {
    const line = `  ${mid(e.source)} --> ${mid(e.target)}: ${e.trigger}`;
    expect(
      lines.some((l) => l === line || l.startsWith(`${line} `)),
      line,
    ).toBe(true);
  }
  expect(lines).toHaveLength(expected.edges.length);
}

/** Every state is one element `id="state:<id>"` and every edge is drawn between them. */
export function expectDotShows(dot: string, expected: ExpectedChart): void {
  expect(dot).toMatch(/^digraph "/);
  for (const id of expected.states) expect(dot.split(`id="state:${id}"`)).toHaveLength(2);
  const end = (id: string) => (expected.compound.has(id) ? `anchor:${id}` : id);
  const edgeLines = dot.split('\n').filter((l) => / -> /.test(l) && !l.includes('"initial:'));
  for (const e of expected.edges) {
    const prefix = `  "${end(e.source)}" -> "${end(e.target)}" [label="${e.trigger}`;
    expect(
      edgeLines.some((l) => l.startsWith(`${prefix}"`) || l.startsWith(`${prefix} `)),
      prefix,
    ).toBe(true);
  }
  expect(edgeLines).toHaveLength(expected.edges.length);
}

const SCXML = 'http://www.w3.org/2005/07/scxml';

/** Parses XML, failing on any well-formedness error. */
export function parseXml(text: string, mime: 'text/xml' | 'image/svg+xml' = 'text/xml') {
  return new DOMParser({
    onError: (level, message) => {
      if (level !== 'warning') throw new Error(`not well-formed XML: ${message}`);
    },
  }).parseFromString(text, mime);
}

const elements = (
  root: { getElementsByTagNameNS: (ns: string, n: string) => ArrayLike<Element> },
  ns: string,
  name: string,
) => Array.from(root.getElementsByTagNameNS(ns, name));

/** The SCXML is well-formed, in the W3C namespace, and has every state and every edge. */
export function expectScxmlShows(scxml: string, expected: ExpectedChart): void {
  const doc = parseXml(scxml);
  const top = doc.documentElement;
  expect(top?.localName).toBe('scxml');
  expect(top?.namespaceURI).toBe(SCXML);
  const ids = ['state', 'parallel', 'final', 'history'].flatMap((tag) =>
    elements(doc, SCXML, tag).map((e) => e.getAttribute('id') ?? ''),
  );
  expect(ids.sort()).toEqual([...expected.states].sort());
  const edges = elements(doc, SCXML, 'transition').flatMap((t) => {
    const source = (t.parentNode as Element).getAttribute('id') ?? '';
    const event = t.getAttribute('event');
    let trigger = event ?? 'always';
    if (event?.startsWith('xstate.after.')) {
      // A delay is the idiom `<send event=… delay=…>` on entry of the same state.
      const send = elements(t.parentNode as Element, SCXML, 'send').find(
        (s) => s.getAttribute('event') === event,
      );
      const delay = send?.getAttribute('delay');
      const ms = delay
        ? delay.endsWith('ms')
          ? Number(delay.slice(0, -2))
          : Number(delay.slice(0, -1)) * 1000
        : null;
      trigger = `after ${ms !== null ? delayWords(ms) : send?.getAttribute('delayexpr')}`;
    }
    const targets = (t.getAttribute('target') ?? '').split(' ').filter(Boolean);
    return (targets.length > 0 ? targets : [source]).map((target) => ({ source, trigger, target }));
  });
  expect(edgeKeys(edges)).toEqual(edgeKeys(expected.edges));
}

/** The SVG is an `<svg>` with exactly one `<g id="state:…">` per state and every edge's trigger as text. */
export function expectSvgShows(svg: string, expected: ExpectedChart): void {
  const doc = parseXml(svg, 'image/svg+xml');
  expect(doc.documentElement?.localName).toBe('svg');
  const groups = elements(doc, 'http://www.w3.org/2000/svg', 'g');
  const stateIds = groups.map((g) => g.getAttribute('id') ?? '').filter((id) => id.startsWith('state:'));
  expect(stateIds.sort()).toEqual([...expected.states].map((id) => `state:${id}`).sort());
  const edgeGroups = groups.filter((g) => g.getAttribute('class') === 'edge');
  const texts = edgeGroups.map((g) =>
    elements(g, 'http://www.w3.org/2000/svg', 'text')
      .map((t) => t.textContent)
      .join(' '),
  );
  for (const e of expected.edges)
    expect(
      texts.some((t) => t.startsWith(e.trigger)),
      e.trigger,
    ).toBe(true);
}
