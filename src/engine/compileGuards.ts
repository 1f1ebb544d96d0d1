import type { Guard } from './compiledNodes.js';
import { STEPPER_ADVICE, type Unsupported } from './unsupportedFeature.js';
import type { GuardReading, TransitionReading } from './xstateInternals.js';

/** A transition's guard as a plain predicate; refuses combinators, params and missing guards. */
export function compileGuard(
  guard: GuardReading | undefined,
  t: TransitionReading,
  where: string,
  unsupported: Unsupported,
): Guard | undefined {
  if (guard === undefined) return undefined;
  const named = guard.name === undefined ? 'an inline guard' : `guard "${guard.name}"`;
  switch (guard.kind) {
    case 'combinator':
      throw unsupported(
        `${named} made with ${guard.combinator}()`,
        where,
        t.eventType,
        guard.combinator === 'stateIn'
          ? 'test the context or event instead of the active state (or split the transition by state), or ' +
              STEPPER_ADVICE
          : `write it as one named guard that combines the checks in code (e.g. isReady: (args) => !isBusy(args)), or ${STEPPER_ADVICE}`,
      );
    case 'unimplemented':
      throw unsupported(`guard "${guard.name}", which no function implements`, where, t.eventType);
    case 'predicate':
      if (guard.hasParams) {
        throw unsupported(
          `${named} with params`,
          where,
          t.eventType,
          `read the values from the context or the event inside the guard (or write one guard per value), or ${STEPPER_ADVICE}`,
        );
      }
      return guard.test;
  }
}
