/** Copies a machine's context into a fresh plain object, as `{ ...context }` does. */
export type ContextCopier = (context: unknown) => Record<string, unknown>;

/** Distinct key lists one machine's copier builds a copy function for; past it, spread. */
const MAX_SHAPES = 8;

/** False once the process has refused to make a function from text. */
let canMakeFunctions = true;

interface Shape {
  keys: readonly string[];
  copy: (context: Record<string, unknown>) => Record<string, unknown>;
}

/**
 * A copier for one machine's contexts. A spread at one site shared by every machine sees all their
 * context shapes, and V8 then copies through its generic path, about ten times slower than an
 * object literal of known keys; so each machine gets copy functions of its own, one per list of
 * context keys it meets (in practice one), made from those keys. A context with symbol keys or a
 * `__proto__` key, or past {@link MAX_SHAPES} lists of keys, is copied by spread. Keys are only
 * ever written as JSON string literals, so no key can inject code.
 */
export function createContextCopier(): ContextCopier {
  const shapes: Shape[] = [];
  let spreadOnly = false;
  return (context) => {
    const c = context as Record<string, unknown>;
    // (Symbol keys are rare and spread copies them: such a context is spread.)
    if (spreadOnly || c === null || typeof c !== 'object' || Object.getOwnPropertySymbols(c).length > 0)
      return { ...c };
    const known = shapeMatching(shapes, c);
    if (known) return known.copy(c);
    const keys = Object.keys(c);
    const shape = shapeOf(shapes, keys) ?? addShape(shapes, keys);
    if (shape) return shape.copy(c);
    if (shapes.length >= MAX_SHAPES || !canMakeFunctions) spreadOnly = true;
    return { ...c };
  };
}

function shapeOf(shapes: readonly Shape[], keys: readonly string[]): Shape | undefined {
  for (const s of shapes) if (sameKeys(s.keys, keys)) return s;
  return undefined;
}

/**
 * The shape whose keys are the context's, in order, found with for-in: no key array per copy (a
 * machine copies its context at every step that assigns). for-in also lists inherited enumerable
 * keys: a context with one matches no shape here and is looked up by `Object.keys` as before.
 */
function shapeMatching(shapes: readonly Shape[], c: Record<string, unknown>): Shape | undefined {
  for (const s of shapes) if (hasKeysInOrder(c, s.keys)) return s;
  return undefined;
}

function hasKeysInOrder(c: Record<string, unknown>, keys: readonly string[]): boolean {
  let i = 0;
  for (const key in c) {
    if (key !== keys[i] || !Object.hasOwn(c, key)) return false;
    i++;
  }
  return i === keys.length;
}

function sameKeys(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function addShape(shapes: Shape[], keys: string[]): Shape | undefined {
  if (!canMakeFunctions || shapes.length >= MAX_SHAPES || keys.includes('__proto__')) return undefined;
  const fields = keys.map((k) => `${JSON.stringify(k)}: c[${JSON.stringify(k)}]`).join(', ');
  let copy: Shape['copy'];
  try {
    copy = new Function('c', `return { ${fields} };`) as Shape['copy'];
  } catch {
    // Node run with --disallow-code-generation-from-strings: spread, slower but the same.
    canMakeFunctions = false;
    return undefined;
  }
  const shape = { keys, copy };
  shapes.push(shape);
  return shape;
}
