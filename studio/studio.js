// @ts-check
// Troupe Studio's page: reads the token, follows the live state and hands it to the four views.
import { createApi, followEvents, readToken } from './api.js';
import { createChartsView } from './charts.js';
import { byId } from './dom.js';
import { createInboxView } from './inbox.js';
import { createPlaygroundView } from './playground.js';
import { createTelemetryView } from './telemetry.js';

const STATUS_TEXT = {
  connecting: 'connecting…',
  live: 'live',
  reconnecting: 'reconnecting…',
  unauthorized: 'not signed in',
};

const connection = byId('connection', HTMLElement);
const connectionText = byId('connection-text', HTMLElement);
const authAlert = byId('auth-alert', HTMLElement);
const problem = byId('problem', HTMLElement);
const main = byId('main', HTMLElement);

let events;

function setStatus(status) {
  connection.dataset.status = status;
  connectionText.textContent = STATUS_TEXT[status] ?? status;
  if (status === 'unauthorized') unauthorized();
}

/** The view tabs (buttons with `role="tab"`). */
const tabButtons = () =>
  [...document.querySelectorAll('button[role="tab"]')].filter((b) => b instanceof HTMLButtonElement);

/** The token is missing or refused: say how to get in, and stop talking to the server. */
function unauthorized() {
  authAlert.hidden = false;
  main.hidden = true;
  for (const tab of tabButtons()) tab.disabled = true;
  connection.dataset.status = 'unauthorized';
  connectionText.textContent = STATUS_TEXT.unauthorized;
  events?.close();
}

function showProblem(text) {
  problem.textContent = text;
  problem.hidden = text === '';
}

/** Tabs: click, or arrow keys / Home / End when a tab has the focus (the ARIA tabs pattern). */
function setUpTabs() {
  const tabs = tabButtons();
  /** @param {HTMLButtonElement} tab @param {boolean} focus */
  const select = (tab, focus) => {
    for (const t of tabs) {
      const on = t === tab;
      t.setAttribute('aria-selected', String(on));
      t.tabIndex = on ? 0 : -1;
      byId(t.getAttribute('aria-controls') ?? '', HTMLElement).hidden = !on;
    }
    if (focus) tab.focus();
  };
  for (const tab of tabs) {
    tab.addEventListener('click', () => select(tab, false));
    tab.addEventListener('keydown', (event) => {
      const i = tabs.indexOf(tab);
      const next = {
        ArrowRight: tabs[(i + 1) % tabs.length],
        ArrowLeft: tabs[(i - 1 + tabs.length) % tabs.length],
        Home: tabs[0],
        End: tabs[tabs.length - 1],
      }[/** @type {KeyboardEvent} */ (event).key];
      if (next) {
        event.preventDefault();
        select(next, true);
      }
    });
  }
}

function start() {
  setUpTabs();
  const token = readToken();
  if (!token) {
    unauthorized();
    return;
  }
  const api = createApi(token);
  const shared = { api, onProblem: showProblem, onUnauthorized: unauthorized };
  const views = [
    createChartsView(shared),
    createInboxView(shared),
    createPlaygroundView(shared),
    createTelemetryView(),
  ];
  let version = -1;
  events = followEvents({
    token,
    api,
    onStatus: setStatus,
    onProblem: showProblem,
    onState: (state) => {
      if (state.version === version) return;
      version = state.version;
      document.body.dataset.version = String(state.version);
      for (const view of views) {
        try {
          view.update(state);
        } catch (error) {
          showProblem(`The page could not show an update: ${error instanceof Error ? error.message : error}`);
        }
      }
    },
  });
}

start();
