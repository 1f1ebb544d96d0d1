/**
 * Values that fight being read, for tests of what Troupe takes from outside: each is made fresh by
 * its maker (a revoked Proxy cannot be unrevoked, and fast-check cannot record a Proxy itself).
 */

const fail = (what: string) => () => {
  throw new Error(what);
};

/** A Proxy whose every trap throws: reading it in any way, even `instanceof`, throws. */
export function throwingProxy(): object {
  return new Proxy(
    {},
    {
      get: fail('trap get'),
      has: fail('trap has'),
      ownKeys: fail('trap ownKeys'),
      getOwnPropertyDescriptor: fail('trap getOwnPropertyDescriptor'),
      getPrototypeOf: fail('trap getPrototypeOf'),
    },
  );
}

/** A revoked Proxy: every operation on it throws a TypeError. */
export function revokedProxy(): object {
  const { proxy, revoke } = Proxy.revocable({}, {});
  revoke();
  return proxy;
}

/** An Error whose `name`, `message`, `stack` and `cause` throw when read. */
function errorWithThrowingFields(): Error {
  const error = new Error('unreadable');
  // The stack first: V8 formats it lazily, reading `name` and `message` as it does.
  for (const key of ['stack', 'name', 'message', 'cause'])
    Object.defineProperty(error, key, { get: fail(`getter ${key}`), enumerable: true });
  return error;
}

/**
 * What a getter or trap may throw besides an ordinary Error: things that throw again when turned
 * into text, read, or checked with `instanceof`.
 */
export const unreadableThrowables: ReadonlyArray<readonly [label: string, make: () => unknown]> = [
  ['a Proxy whose traps throw', throwingProxy],
  ['a revoked Proxy', revokedProxy],
  ['an object whose toString throws', () => ({ toString: fail('toString') })],
  ['an object without a prototype', () => Object.create(null)],
  ['an Error whose fields throw', errorWithThrowingFields],
  ['an Error Proxy whose get trap throws', () => new Proxy(new Error('x'), { get: fail('error trap get') })],
  ['a Symbol', () => Symbol('thrown')],
  ['a BigInt', () => 10n],
  ['undefined', () => undefined],
];

/** An object whose `key` getter throws `thrown()`. */
export function getterThrowing(base: Record<string, unknown>, key: string, thrown: () => unknown): object {
  return Object.defineProperty({ ...base }, key, {
    enumerable: true,
    get() {
      throw thrown();
    },
  });
}
