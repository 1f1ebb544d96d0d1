import { compileMachine, type MachineState } from '../engine/compiledMachine.js';
import { createMachineStepper } from '../engine/machineStepper.js';
import {
  type AvatarPresenceContext,
  type AvatarPresenceEvent,
  type AvatarPresenceInput,
  avatarPresenceMachine,
} from '../machines/avatarPresence.machine.js';
import {
  type ConversationThreadContext,
  type ConversationThreadEvent,
  type ConversationThreadInput,
  conversationThreadMachine,
} from '../machines/conversationThread.machine.js';

/** Steps one kind of machine state as data. */
export interface StateStepper<TContext, TInput, TEvent> {
  initial(input: TInput): MachineState<TContext>;
  step(state: MachineState<TContext>, event: TEvent): MachineState<TContext>;
  /** The state for a persisted value and context; throws for states the machine does not have. */
  restore(value: MachineState<TContext>['value'], context: TContext): MachineState<TContext>;
}

/** How a channel floor steps its presences and threads. */
export interface FloorEngine {
  readonly name: FloorEngineName;
  readonly presence: StateStepper<AvatarPresenceContext, AvatarPresenceInput, AvatarPresenceEvent>;
  readonly thread: StateStepper<ConversationThreadContext, ConversationThreadInput, ConversationThreadEvent>;
}

/** `compiled`: the machines' definitions run as plain functions; `xstate`: real xstate snapshots. */
export type FloorEngineName = 'compiled' | 'xstate';

const engines = new Map<FloorEngineName, FloorEngine>();

/** The shared engine of that name (built once per process). */
export function floorEngine(name: FloorEngineName): FloorEngine {
  let engine = engines.get(name);
  if (!engine) {
    // Each engine only ever receives states it produced itself, hence the casts.
    const presence =
      name === 'compiled'
        ? compileMachine(avatarPresenceMachine)
        : createMachineStepper(avatarPresenceMachine);
    const thread =
      name === 'compiled'
        ? compileMachine(conversationThreadMachine)
        : createMachineStepper(conversationThreadMachine);
    engine = {
      name,
      presence: presence as unknown as FloorEngine['presence'],
      thread: thread as unknown as FloorEngine['thread'],
    };
    engines.set(name, engine);
  }
  return engine;
}
