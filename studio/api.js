// @ts-check
// The studio's connection to the server: the token, JSON requests and the live stream.

/** @typedef {import('./state.js').StudioApi} StudioApi */
/** @typedef {import('./state.js').StudioState} StudioState */

const TOKEN_KEY = 'troupe-studio-token';

/** Raised when the server refuses the token (401): the page says how to get a good one. */
export class UnauthorizedError extends Error {
  constructor(message) {
    super(message);
    this.name = 'UnauthorizedError';
  }
}

/** An error the API answered with (`{ error: { code, message } }`). */
export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.code = code;
  }
}

/**
 * The token: taken from `#token=` when the page was opened with one (then kept in sessionStorage
 * and removed from the URL bar, so it is not left in the history or a shared screenshot), else the
 * one this tab kept earlier. Undefined when there is none.
 * @returns {string | undefined}
 */
export function readToken() {
  const match = /(?:^#|&)token=([^&]*)/u.exec(location.hash);
  if (match) {
    const token = decodeURIComponent(match[1]);
    try {
      sessionStorage.setItem(TOKEN_KEY, token);
    } catch {
      // Storage may be disabled; the token still works for this page's life.
    }
    history.replaceState(null, '', `${location.pathname}${location.search}`);
    return token || undefined;
  }
  try {
    return sessionStorage.getItem(TOKEN_KEY) ?? undefined;
  } catch {
    return undefined;
  }
}

/** Requests to the studio API with `Authorization: Bearer <token>`. */
/**
 * @param {string | undefined} token
 * @returns {StudioApi}
 */
export function createApi(token) {
  /** @param {string} method @param {string} path @param {unknown} [body] @returns {Promise<any>} */
  async function request(method, path, body) {
    /** @type {Record<string, string>} */
    const headers = { Accept: 'application/json' };
    if (token) headers.Authorization = `Bearer ${token}`;
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    const response = await fetch(path, {
      method,
      headers,
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      cache: 'no-store',
      credentials: 'omit',
    });
    let payload;
    try {
      payload = await response.json();
    } catch {
      payload = undefined;
    }
    if (response.status === 401) {
      throw new UnauthorizedError(payload?.error?.message ?? 'The studio refused the token.');
    }
    if (!response.ok) {
      const code = payload?.error?.code ?? `HTTP_${response.status}`;
      const message = payload?.error?.message ?? `${method} ${path} failed with ${response.status}`;
      throw new ApiError(response.status, code, message);
    }
    return payload;
  }
  return {
    get: (path) => request('GET', path),
    post: (path, body) => request('POST', path, body ?? {}),
  };
}

/**
 * Follows GET /api/events. `onState` gets each StudioState; `onStatus` gets 'connecting', 'live',
 * 'reconnecting' or 'unauthorized'; `onProblem` gets a sentence when an update cannot be read. EventSource reconnects by itself after a dropped connection;
 * when the server answers with an error instead (401, or the server is down), the browser gives up
 * and this asks the API whether the token is refused before trying again with a growing pause.
 * @param {{
 *   token: string | undefined,
 *   api: StudioApi,
 *   onState: (state: StudioState) => void,
 *   onStatus: (status: 'connecting' | 'live' | 'reconnecting' | 'unauthorized') => void,
 *   onProblem: (text: string) => void,
 * }} options
 * @returns {{ close(): void }}
 */
export function followEvents({ token, api, onState, onStatus, onProblem }) {
  /** @type {EventSource | undefined} */
  let source;
  let closed = false;
  let retryMs = 500;
  let timer;
  const open = () => {
    if (closed) return;
    source = new EventSource(`/api/events?token=${encodeURIComponent(token ?? '')}`);
    source.addEventListener('open', () => {
      retryMs = 500;
      onStatus('live');
    });
    source.addEventListener('state', (event) => {
      try {
        onState(JSON.parse(event.data));
      } catch (error) {
        onProblem(`A live update could not be read: ${error instanceof Error ? error.message : error}`);
      }
      onStatus('live');
    });
    const opened = source;
    opened.addEventListener('error', () => {
      if (closed) return;
      if (opened.readyState === EventSource.CONNECTING) {
        onStatus('reconnecting');
        return;
      }
      // CLOSED: the server refused the stream or is gone. Ask why before trying again.
      opened.close();
      onStatus('reconnecting');
      /** @type {Promise<StudioState>} */ (api.get('/api/state')).then(
        (state) => {
          onState(state);
          schedule();
        },
        (error) => {
          if (error instanceof UnauthorizedError) onStatus('unauthorized');
          else schedule();
        },
      );
    });
  };
  const schedule = () => {
    clearTimeout(timer);
    timer = setTimeout(open, retryMs);
    retryMs = Math.min(retryMs * 2, 10_000);
  };
  onStatus('connecting');
  open();
  return {
    close() {
      closed = true;
      clearTimeout(timer);
      source?.close();
    },
  };
}
