// @ts-check
// Telemetry: how composed responses were made (a bar per mode) and the runtime's counters.
import { byId, formatTime, h, replaceChildren, svg } from './dom.js';

/** @typedef {import('./state.js').StudioState} StudioState */

const BAR_HEIGHT = 22;
const GAP = 8;
const LABEL_WIDTH = 150;
const BAR_WIDTH = 320;
const COUNT_WIDTH = 60;

/** `emailsReceived` as “emails received”. */
export function humanName(name) {
  return name
    .replace(/([a-z0-9])([A-Z])/gu, '$1 $2')
    .replace(/[_-]+/gu, ' ')
    .toLowerCase();
}

/** @param {Record<string, number>} modes @param {number} total */
function modesChart(modes, total) {
  const entries = Object.entries(modes).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  if (entries.length === 0) return h('p', { class: 'hint' }, 'No composed responses yet.');
  const max = Math.max(...entries.map(([, n]) => n), 1);
  const height = entries.length * (BAR_HEIGHT + GAP);
  const width = LABEL_WIDTH + BAR_WIDTH + COUNT_WIDTH;
  const chart = svg('svg', {
    viewBox: `0 0 ${width} ${height}`,
    width,
    height,
    role: 'img',
    class: 'bars',
    'aria-label': `Composed-response modes: ${entries.map(([m, n]) => `${m} ${n}`).join(', ')} (total ${total})`,
  });
  entries.forEach(([mode, count], i) => {
    const y = i * (BAR_HEIGHT + GAP);
    const barWidth = Math.max(2, Math.round((count / max) * BAR_WIDTH));
    chart.append(
      svg(
        'text',
        { x: LABEL_WIDTH - 8, y: y + BAR_HEIGHT * 0.7, 'text-anchor': 'end', class: 'bar-label' },
        mode,
      ),
      svg(
        'rect',
        { x: LABEL_WIDTH, y, width: barWidth, height: BAR_HEIGHT, rx: 3, class: 'bar', 'data-mode': mode },
        svg('title', {}, `${mode}: ${count}`),
      ),
      svg(
        'text',
        { x: LABEL_WIDTH + barWidth + 6, y: y + BAR_HEIGHT * 0.7, class: 'bar-count' },
        String(count),
      ),
    );
  });
  return chart;
}

export function createTelemetryView() {
  const chartBox = byId('modes-chart', HTMLElement);
  const recent = byId('recent-modes', HTMLElement);
  const counters = byId('counters', HTMLElement);
  let lastKey;

  /** @param {StudioState} state */
  function update(state) {
    const { telemetry } = state;
    const key = JSON.stringify([telemetry, state.counters]);
    if (key === lastKey) return; // nothing new: keep the DOM (and any focus) as it is
    lastKey = key;
    replaceChildren(
      chartBox,
      h('p', {}, `${telemetry.total} composed response${telemetry.total === 1 ? '' : 's'}`),
      modesChart(telemetry.modes, telemetry.total),
    );
    replaceChildren(
      recent,
      telemetry.recent
        .slice(-10)
        .reverse()
        .map((r) =>
          h(
            'li',
            {},
            h('time', { class: 'muted' }, formatTime(r.at)),
            ' ',
            h('code', {}, r.mode),
            ` from ${r.origin}`,
          ),
        ),
    );
    const names = Object.keys(state.counters).sort();
    replaceChildren(
      counters,
      names.length === 0
        ? h('p', { class: 'hint' }, 'Nothing counted yet.')
        : names.map((name) => [
            h('dt', { title: name }, humanName(name)),
            h('dd', { dataset: { counter: name } }, String(state.counters[name])),
          ]),
    );
  }

  return { update };
}
