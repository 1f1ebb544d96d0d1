// @ts-check
// Charts: every machine drawn, the live actors, and the picked actor's state, context and events.
import { byId, find, formatStateValue, formatTime, h, prettyJson, replaceChildren } from './dom.js';

/** @typedef {import('./state.js').StudioActor} StudioActor */
/** @typedef {import('./state.js').StudioApi} StudioApi */
/** @typedef {import('./state.js').StudioChart} StudioChart */
/** @typedef {import('./state.js').StudioEvent} StudioEvent */
/** @typedef {import('./state.js').StudioState} StudioState */

const SVG_NS = 'http://www.w3.org/2000/svg';
const ACTIVE = 'active-state';
const EVENTS_SHOWN = 30;

/**
 * The charts' SVG comes from the studio's own renderer (Graphviz over the machine definitions), the
 * only markup the page inserts. It is parsed as an SVG document, not as HTML, and anything that
 * could run (scripts, foreign HTML, event attributes) is dropped before it is adopted.
 */
function parseChartSvg(markup) {
  const doc = new DOMParser().parseFromString(markup, 'image/svg+xml');
  const root = doc.documentElement;
  if (root.namespaceURI !== SVG_NS || root.localName !== 'svg' || doc.querySelector('parsererror')) {
    return undefined;
  }
  for (const el of root.querySelectorAll('script, foreignObject')) el.remove();
  for (const el of [root, ...root.querySelectorAll('*')]) {
    for (const attr of [...el.attributes]) {
      if (/^on/iu.test(attr.name) || /^\s*javascript:/iu.test(attr.value)) el.removeAttribute(attr.name);
    }
  }
  root.setAttribute('role', 'img');
  return document.importNode(root, true);
}

/**
 * Recent events, newest first; with `nameActors`, each names the actor it is about.
 * @param {StudioEvent[]} events
 * @param {boolean} nameActors
 */
function eventList(events, nameActors) {
  return h(
    'ol',
    { class: 'event-list', id: 'actor-events' },
    events.map((e) =>
      h(
        'li',
        {},
        h('time', {}, formatTime(e.at)),
        ' ',
        h('code', {}, e.type),
        nameActors && e.actorId ? h('span', { class: 'muted' }, ` ${e.actorId}`) : null,
        ' ',
        e.summary ?? '',
      ),
    ),
  );
}

/**
 * @param {{ api: StudioApi, onProblem: (text: string) => void, onUnauthorized: (error: Error) => void }} options
 */
export function createChartsView({ api, onProblem, onUnauthorized }) {
  const list = byId('actor-list', HTMLElement);
  const detail = byId('actor-detail', HTMLElement);
  const chartList = byId('chart-list', HTMLElement);
  /** machine id → { section, box } */
  const charts = new Map();
  /** @type {string | undefined} */
  let selected;
  /** @type {StudioState | undefined} */
  let latest;

  /** @type {Promise<{ charts: StudioChart[] }>} */ (api.get('/api/charts')).then(
    ({ charts: loaded }) => {
      chartList.replaceChildren();
      for (const chart of loaded) {
        const svgEl = parseChartSvg(chart.svg);
        const titleId = `chart-title-${chart.id}`;
        if (svgEl) svgEl.setAttribute('aria-labelledby', titleId);
        const box = h(
          'div',
          { class: 'svg-box fit' },
          svgEl ?? h('p', { class: 'hint' }, 'This chart could not be read.'),
        );
        const fit = h(
          'button',
          {
            type: 'button',
            class: 'small',
            'aria-pressed': 'true',
            onclick: () => {
              const fitted = box.classList.toggle('fit');
              fit.setAttribute('aria-pressed', String(fitted));
            },
          },
          'Fit to width',
        );
        const section = h(
          'details',
          { class: 'chart', id: `chart-${chart.id}`, open: true, dataset: { machine: chart.id } },
          h('summary', {}, h('span', { id: titleId, class: 'chart-title' }, chart.title ?? chart.id)),
          chart.description ? h('p', { class: 'hint' }, chart.description) : null,
          h('div', { class: 'chart-tools' }, fit),
          box,
        );
        charts.set(chart.id, { section, box });
        chartList.append(section);
      }
      if (latest) highlight(latest);
    },
    (error) => {
      if (error?.name === 'UnauthorizedError') onUnauthorized(error);
      else {
        replaceChildren(chartList, h('p', { class: 'hint' }, 'The charts could not be loaded.'));
        onProblem(`The charts could not be loaded: ${error.message}`);
      }
    },
  );

  function pick(id) {
    selected = id;
    if (latest) update(latest);
    const actor = latest?.actors.find((a) => a.id === id);
    const chart = actor && charts.get(actor.machine);
    if (chart) chart.section.open = true;
  }

  /** @param {StudioState} state */
  function highlight(state) {
    const actor = state.actors.find((a) => a.id === selected);
    for (const [machine, { section, box }] of charts) {
      const mine = actor?.machine === machine;
      section.classList.toggle('current', mine);
      for (const el of box.querySelectorAll(`.${ACTIVE}`)) el.classList.remove(ACTIVE);
      if (!mine) continue;
      for (const stateId of actor?.stateIds ?? []) {
        const el = box.querySelector(`[id="state:${CSS.escape(stateId)}"]`);
        el?.classList.add(ACTIVE);
      }
    }
  }

  /** @param {StudioActor} actor */
  function actorItem(actor) {
    const value = formatStateValue(actor.value);
    return h(
      'li',
      {},
      h(
        'button',
        {
          type: 'button',
          class: 'actor',
          'aria-pressed': String(actor.id === selected),
          dataset: { actorId: actor.id, status: actor.status },
          onclick: () => pick(actor.id),
        },
        h('span', { class: 'actor-label' }, actor.label),
        h('span', { class: `tag kind-${actor.kind}` }, actor.kind),
        h('span', { class: `tag status-${actor.status}` }, actor.status),
        h('span', { class: 'actor-state' }, value),
      ),
    );
  }

  /** @param {StudioState} state */
  function renderDetail(state) {
    const actor = state.actors.find((a) => a.id === selected);
    if (!actor) {
      const recent = state.events.slice(-EVENTS_SHOWN).reverse();
      replaceChildren(
        detail,
        h('p', { class: 'hint' }, selected ? `${selected} is no longer listed.` : 'No actor picked.'),
        h('h4', {}, 'Recent events of all actors'),
        recent.length === 0 ? h('p', { class: 'hint' }, 'No events yet.') : eventList(recent, true),
      );
      return;
    }
    const events = state.events
      .filter((e) => e.actorId === actor.id)
      .slice(-EVENTS_SHOWN)
      .reverse();
    replaceChildren(
      detail,
      h('h3', { id: 'actor-detail-label' }, actor.label),
      h(
        'dl',
        { class: 'facts' },
        h('dt', {}, 'id'),
        h('dd', {}, h('code', {}, actor.id)),
        h('dt', {}, 'machine'),
        h('dd', {}, actor.machine),
        h('dt', {}, 'status'),
        h('dd', { id: 'actor-status', dataset: { status: actor.status } }, actor.status),
        h('dt', {}, 'state'),
        h('dd', { id: 'actor-state' }, formatStateValue(actor.value)),
        actor.channelKey ? h('dt', {}, 'channel') : null,
        actor.channelKey ? h('dd', {}, actor.channelKey) : null,
        h('dt', {}, 'updated'),
        h('dd', {}, formatTime(actor.updatedAt)),
      ),
      h(
        'p',
        {},
        h('a', { href: `#chart-${actor.machine}`, class: 'chart-link' }, `Show the ${actor.machine} chart`),
      ),
      h('h4', {}, 'Context'),
      h('pre', { class: 'json', id: 'actor-context', tabindex: '0' }, prettyJson(actor.context)),
      h('h4', {}, 'Recent events'),
      events.length === 0 ? h('p', { class: 'hint' }, 'No events yet.') : eventList(events, false),
    );
  }

  /** @param {StudioState} state */
  function update(state) {
    latest = state;
    const actors = [...state.actors].sort((a, b) =>
      a.status === b.status ? 0 : a.status === 'active' ? -1 : 1,
    );
    const focusedId =
      document.activeElement instanceof HTMLElement ? document.activeElement.dataset.actorId : undefined;
    replaceChildren(
      list,
      actors.length === 0 ? h('li', { class: 'hint' }, 'No actors yet.') : actors.map(actorItem),
    );
    if (focusedId) find(list, `[data-actor-id="${CSS.escape(focusedId)}"]`, HTMLElement)?.focus();
    renderDetail(state);
    highlight(state);
  }

  return { update };
}
