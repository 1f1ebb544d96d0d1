// @ts-check
// Telemetry: how composed responses were made (a bar per mode), the day's model usage per avatar
// with its caps and the caps reached, and the runtime's counters.
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

const whole = (/** @type {number} */ n) => Math.round(n).toLocaleString('en');
/** USD with enough places to show a fraction of a cent (as `troupe usage` prints it). */
function usd(/** @type {number} */ n) {
  if (n === 0) return '$0';
  return n >= 1
    ? `$${n.toLocaleString('en', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`
    : `$${n.toPrecision(2)}`;
}

/** @param {StudioState['usage']['total']} t */
function tokensText(t) {
  return t.calls > t.callsWithoutUsage || t.calls === 0 ? whole(t.inputTokens + t.outputTokens) : '—';
}

/** @param {StudioState['usage']['totalCaps'][number]} cap */
function capText(cap) {
  const share = `${((cap.used / cap.limit) * 100).toFixed(1)}%`;
  const figures =
    cap.measure === 'tokens'
      ? `${whole(cap.used)} of ${whole(cap.limit)} tokens`
      : `${usd(cap.used)} of ${usd(cap.limit)}`;
  return `${figures} (${share})${cap.used >= cap.limit ? ' — reached' : ''}`;
}

/** A row per avatar and one for every call: calls, tokens, estimated cost, caps and why it is stopped. */
function usageTable(/** @type {StudioState['usage']} */ usage) {
  /** @param {string} who @param {StudioState['usage']['total']} t @param {StudioState['usage']['totalCaps']} caps @param {string} stopped */
  const row = (who, t, caps, stopped) =>
    h(
      'tr',
      { dataset: { usage: who } },
      h('th', { scope: 'row' }, who),
      h('td', {}, whole(t.calls)),
      h('td', {}, tokensText(t)),
      h('td', {}, t.calls > t.callsWithoutUsage + t.unpricedCalls || t.calls === 0 ? usd(t.costUsd) : '—'),
      h('td', {}, caps.map(capText).join('; ') || 'none'),
      h('td', { class: stopped ? 'capped' : 'muted' }, stopped),
    );
  return h(
    'table',
    { class: 'usage' },
    h('caption', {}, `UTC day ${usage.day}; costs are estimates from the price table (TROUPE_MODEL_PRICES)`),
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        ...['avatar', 'calls', 'tokens', 'cost', 'daily caps', 'stopped by'].map((t) =>
          h('th', { scope: 'col' }, t),
        ),
      ),
    ),
    h(
      'tbody',
      {},
      ...usage.avatars.map((a) =>
        row(a.name, a.totals, a.caps, a.capped ? `${a.capped.reason} (${a.capped.detail})` : ''),
      ),
      row('All calls', usage.total, usage.totalCaps, ''),
    ),
  );
}

export function createTelemetryView() {
  const chartBox = byId('modes-chart', HTMLElement);
  const recent = byId('recent-modes', HTMLElement);
  const counters = byId('counters', HTMLElement);
  const usageBox = byId('usage', HTMLElement);
  const capsReached = byId('caps-reached', HTMLElement);
  let lastKey;

  /** @param {StudioState} state */
  function update(state) {
    const { telemetry } = state;
    const key = JSON.stringify([telemetry, state.counters, state.usage]);
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
    replaceChildren(
      usageBox,
      state.usage.day === '' ? h('p', { class: 'hint' }, 'No usage ledger.') : usageTable(state.usage),
    );
    const reached = state.usage.capsReached.slice(-10).reverse();
    replaceChildren(
      capsReached,
      reached.length === 0
        ? h('li', { class: 'hint' }, 'No cap reached.')
        : reached.map((c) =>
            h(
              'li',
              {},
              h('time', { class: 'muted' }, formatTime(c.at)),
              ' ',
              `${c.avatarId} in ${c.channelKey}: `,
              h('code', {}, c.reason),
              ` ${c.detail}${c.notice ? ' (a person was told)' : ' (a turn left out)'}`,
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
