/**
 * A routing actor on simulated time with the in-memory outbox, and transports a test answers by
 * hand: what the routing tests drive. Imports only the actor and its ports, so these tests stay
 * quick to load.
 */
import { SimulatedClock } from '../../src/actors/clock.js';
import { RoutingActor, type RoutingActorOptions } from '../../src/actors/routingActor.js';
import { MemoryOutbox } from '../../src/adapters/store/memory/memoryOutbox.js';
import { silentLogger } from '../../src/logging/logger.js';
import type { OutgoingResponse } from '../../src/ports/outgoingResponse.js';
import type { RoutingOutcome } from '../../src/ports/routingOutcome.js';
import type { Transport, TransportLimits, TransportMessage } from '../../src/ports/transport.js';

/** A valid response to the `test` channel kind, room `room`. */
export function responseOf(key: string, text: string | undefined, changes: Partial<OutgoingResponse> = {}) {
  const response: OutgoingResponse = {
    idempotencyKey: key,
    channel: { kind: 'test', id: 'room' },
    attachments: [],
    origin: { kind: 'notice' },
    preparedAt: 0,
    ...changes,
  };
  if (text !== undefined) response.text = text;
  return response;
}

/** A routing actor over `transports`, on a simulated clock at 0 and a memory outbox unless given. */
export function routingWith(transports: Transport[], options: Partial<RoutingActorOptions> = {}) {
  const clock = (options.clock as SimulatedClock | undefined) ?? new SimulatedClock(0);
  const outbox = (options.outbox as MemoryOutbox | undefined) ?? new MemoryOutbox();
  const routing = new RoutingActor({ transports, outbox, clock, logger: silentLogger(), ...options });
  return { routing, clock, outbox };
}

/** One macrotask: promises already settled have run their callbacks. */
export const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Runs a delivery to its end on simulated time: lets pending promises settle, and when nothing
 * is left to do, fires the next timer. Returns the outcome and the instants the timers fired at.
 */
export async function drive(clock: SimulatedClock, delivery: Promise<RoutingOutcome>) {
  let done: RoutingOutcome | undefined;
  void delivery.then((o) => {
    done = o;
  });
  const fired: number[] = [];
  for (let step = 0; step < 1_000 && done === undefined; step += 1) {
    await tick();
    if (done !== undefined) break;
    const due = clock.nextDue();
    if (due !== undefined && clock.fireNext()) fired.push(due);
  }
  if (done === undefined) throw new Error('the delivery never ended');
  return { outcome: done, fired };
}

/** A transport whose sends the test answers one by one. */
export class ScriptedTransport implements Transport {
  readonly kind: string;
  readonly limits: TransportLimits;
  readonly messages: TransportMessage[] = [];
  readonly signals: AbortSignal[] = [];
  constructor(
    private readonly answer: (n: number, message: TransportMessage) => Promise<unknown>,
    limits: Partial<TransportLimits> = {},
    kind = 'test',
  ) {
    this.kind = kind;
    this.limits = { maxTextLength: 2000, voice: true, attachments: true, ...limits };
  }
  send(message: TransportMessage, signal?: AbortSignal) {
    this.messages.push(message);
    if (signal) this.signals.push(signal);
    return this.answer(this.messages.length, message) as never;
  }
}

/** A transport that holds every send until the test lets it through, in any order. */
export class GatedTransport implements Transport {
  readonly kind = 'test';
  readonly limits: TransportLimits = { maxTextLength: 2000, voice: true, attachments: true };
  /** Texts in the order the transport was handed them. */
  readonly started: string[] = [];
  private readonly gates = new Map<string, () => void>();
  send(message: TransportMessage) {
    const text = message.text ?? '';
    this.started.push(text);
    return new Promise<{ messageId: string }>((resolve) => {
      this.gates.set(text, () => resolve({ messageId: `id-${text}` }));
    });
  }
  /** Lets the send of `text` answer. */
  release(text: string): void {
    const open = this.gates.get(text);
    if (!open) throw new Error(`no send of "${text}" is waiting`);
    this.gates.delete(text);
    open();
  }
}
