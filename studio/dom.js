// @ts-check
// Small DOM helpers. API data only ever becomes text (textContent), never markup.

/** @typedef {Node | string | number | null | undefined | false | unknown[]} Child A child of {@link h}: arrays are flattened. */

/**
 * Creates an element: `h('button', { type: 'button', onclick }, 'Send')`. Attributes starting with
 * `on` become listeners; `class`, `dataset` and plain attributes are set; children are nodes or
 * text (strings and numbers become text nodes); null/undefined/false children are skipped.
 * @param {string} tag
 * @param {Record<string, unknown>} [attrs]
 * @param {...Child} children
 * @returns {HTMLElement}
 */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith('on') && typeof value === 'function')
      el.addEventListener(key.slice(2), /** @type {EventListener} */ (value));
    else if (key === 'dataset') Object.assign(el.dataset, value);
    else if (key === 'value' && 'value' in el) el.value = String(value);
    else if (key === 'checked' && 'checked' in el) el.checked = Boolean(value);
    else el.setAttribute(key, value === true ? '' : String(value));
  }
  append(el, children);
  return el;
}

/**
 * The page's element with this id, of this type; a page without it is a broken page, so this throws.
 * @template {Element} T
 * @param {string} id
 * @param {{ new (): T, prototype: T }} type
 * @returns {T}
 */
export function byId(id, type) {
  const el = document.getElementById(id);
  if (!(el instanceof type)) throw new Error(`The page has no ${type.name} #${id}.`);
  return el;
}

/**
 * The first element under `root` matching `selector`, of this type, or undefined.
 * @template {Element} T
 * @param {ParentNode} root
 * @param {string} selector
 * @param {{ new (): T, prototype: T }} type
 * @returns {T | undefined}
 */
export function find(root, selector, type) {
  const el = root.querySelector(selector);
  return el instanceof type ? el : undefined;
}

/** Appends children (see {@link h}) to a node. */
export function append(parent, children) {
  for (const child of children.flat(Number.POSITIVE_INFINITY)) {
    if (child === undefined || child === null || child === false) continue;
    parent.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return parent;
}

/** Replaces a node's children. */
export function replaceChildren(parent, ...children) {
  parent.replaceChildren();
  return append(parent, children);
}

/** An SVG element (for the telemetry bars), attributes set as given. */
export function svg(tag, attrs = {}, ...children) {
  const el = document.createElementNS('http://www.w3.org/2000/svg', tag);
  for (const [key, value] of Object.entries(attrs)) el.setAttribute(key, String(value));
  for (const child of children) {
    if (child === undefined || child === null) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

/** A time on the studio's clock as HH:MM:SS (UTC, as the runtime's clock counts). */
export function formatTime(at) {
  if (typeof at !== 'number' || !Number.isFinite(at)) return '';
  return new Date(at).toISOString().slice(11, 19);
}

/** JSON for people: two-space indented, long strings kept whole. */
export function prettyJson(value) {
  try {
    return JSON.stringify(value, null, 2) ?? 'undefined';
  } catch {
    return String(value);
  }
}

/** The state value as one line: `responding.reviewing`, or `{a: x, b: y}` for parallel states. */
export function formatStateValue(value) {
  if (typeof value === 'string') return value;
  if (value && typeof value === 'object') {
    return Object.entries(value)
      .map(([key, inner]) => {
        const rest = formatStateValue(inner);
        return rest === '' ? key : `${key}.${rest}`;
      })
      .join(' | ');
  }
  return '';
}
