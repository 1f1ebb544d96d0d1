import { runtimeErrorCodes } from '../ports/errorCodes.js';
import { TroupeError } from '../ports/troupeError.js';

/** How to step a machine the compiled engine refuses. */
export const STEPPER_ADVICE =
  "step this machine with createMachineStepper instead (a channel floor: engine: 'xstate')";

/**
 * Builds the `TROUPE_MACHINE_UNSUPPORTED` error for one feature of a machine: `eventType` is
 * undefined for a state, null for an eventless transition, else the event the transition is on.
 */
export type Unsupported = (
  what: string,
  state: string,
  eventType?: string | null,
  advice?: string,
) => TroupeError;

/** The {@link Unsupported} error factory for the machine with this id. */
export function unsupportedIn(machineId: string): Unsupported {
  return (what, state, eventType, advice = STEPPER_ADVICE) => {
    const on =
      eventType === undefined ? '' : eventType === null ? ', eventless transition' : `, on "${eventType}"`;
    return new TroupeError(
      runtimeErrorCodes.machineUnsupported,
      `compileMachine: machine "${machineId}" uses ${what} at state "${state}"${on}, which the compiled ` +
        `engine does not run; ${advice}.`,
      { details: { machine: machineId, state, ...(eventType === undefined ? {} : { event: eventType }) } },
    );
  };
}
