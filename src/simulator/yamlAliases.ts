/**
 * The one limit on YAML alias expansion that scenario files and avatars files share. yaml weighs
 * each alias by the nodes it stands for, so a "billion laughs" file (aliases of lists of aliases,
 * a few hundred bytes that would expand to gigabytes) is refused before it is built, while the
 * few aliases people write by hand still read.
 */
export const MAX_YAML_ALIAS_COUNT = 100;

/**
 * What to tell a person whose file went over {@link MAX_YAML_ALIAS_COUNT}, or `undefined` when
 * `error` is some other failure. (yaml reports it as a ReferenceError that speaks of an attack,
 * which says nothing about what to change.)
 */
export function aliasLimitProblem(error: unknown): string | undefined {
  if (!(error instanceof ReferenceError) || !/alias count/iu.test(error.message)) return undefined;
  return (
    `its aliases (*name) expand to too many values (yaml's limit is ${MAX_YAML_ALIAS_COUNT}, ` +
    'a guard against "billion laughs" files); write the repeated values out instead of aliasing them'
  );
}
