/**
 * Caps over random traffic (see `support/floorTraffic.ts`), with a restart in the middle: the floor
 * restored from the JSON of its snapshot, the usage ledger read back from its store. No turn is
 * granted to a channel at its hourly cap (messages in the last hour plus turns in flight), or to an
 * avatar at its daily token cap or when everyone together is at theirs, in any lane; a person hears
 * of an avatar's cap at most once per reset window.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { AvatarDefinition } from '../../src/actors/avatarDefinition.js';
import { ledgerSpendGate } from '../../src/actors/usage/spendGate.js';
import { createUsageLedger } from '../../src/actors/usage/storedUsageLedger.js';
import type { UsageLedger } from '../../src/actors/usage/usageLedger.js';
import { createMemoryStore } from '../../src/adapters/store/memory/memoryStore.js';
import type { CoordinationConfig } from '../../src/config/coordinationConfig.js';
import { builtInModelPrices } from '../../src/config/modelPrices.js';
import { CAP_HOUR_MS } from '../../src/floor/caps.js';
import { ChannelFloor, type ChannelFloorOptions } from '../../src/floor/channelFloor.js';
import type { FloorEffect, FloorEvent } from '../../src/floor/floorTypes.js';
import { configArb, FloorDriver, type LogEntry, trafficArb, trafficRoster } from '../support/floorTraffic.js';
import { fuzzRuns } from '../support/fuzzRuns.js';

const cappedConfig: fc.Arbitrary<CoordinationConfig> = fc
  .record({
    base: configArb,
    channelMaxAvatarMessagesPerHour: fc.integer({ min: 0, max: 5 }),
    avatarMaxTokensPerDay: fc.integer({ min: 0, max: 3_000 }),
    maxTokensPerDay: fc.integer({ min: 0, max: 6_000 }),
    capNotice: fc.constantFrom('notice' as const, 'silent' as const),
  })
  .map(({ base, ...caps }) => ({ ...base, ...caps }));

const cases = fc.record({
  traffic: trafficArb({ maxSteps: 40, config: cappedConfig }),
  /** After which external step the process restarts. */
  restartAfter: fc.nat({ max: 40 }),
  /** Tokens each delivered turn used. */
  tokensPerTurn: fc.integer({ min: 1, max: 900 }),
});

/** A floor the test can restart: restored from the JSON of its snapshot, same options. */
class RestartableFloor {
  inner: ChannelFloor;
  constructor(
    private readonly options: ChannelFloorOptions,
    private readonly before: (event: FloorEvent) => void,
  ) {
    this.inner = new ChannelFloor(options);
  }
  restart(): void {
    const { present: _p, at: _a, ...restore } = this.options;
    this.inner = ChannelFloor.restore(JSON.parse(JSON.stringify(this.inner.snapshot())), restore);
  }
  handle(event: FloorEvent): FloorEffect[] {
    this.before(event);
    return this.inner.handle(event);
  }
  nextDeadline() {
    return this.inner.nextDeadline();
  }
  view() {
    return this.inner.view();
  }
  snapshot() {
    return this.inner.snapshot();
  }
}

/** What the test keeps to judge each claim: avatar messages, turns in flight, notices given. */
class CapWatch {
  readonly messages: number[] = [];
  /** Turn id → avatar id, for turns granted and not yet delivered or released. */
  readonly inFlight = new Map<string, string>();
  readonly noticeUntil = new Map<string, number>();
  claims = 0;
  capped = 0;
  now = 0;

  constructor(
    private readonly config: CoordinationConfig,
    private readonly ledger: () => UsageLedger,
    private readonly tokensPerTurn: number,
  ) {}

  observe(entry: LogEntry): void {
    const { event, effects } = entry;
    this.now = Math.max(this.now, event.at);
    const rejected = effects.some((e) => e.type === 'event.rejected');
    if (event.type === 'message' && event.author.kind === 'avatar' && !rejected) this.messages.push(this.now);
    for (const effect of effects) this.check(effect);
  }

  /**
   * A turn's usage is recorded when its generation ends, before it is delivered (as the runtime's
   * meter does): here, just before the floor hears of the delivery.
   */
  beforeEvent(event: FloorEvent): void {
    if (event.type !== 'turn.delivered') return;
    const avatarId = this.inFlight.get(event.turnId);
    if (avatarId === undefined) return;
    this.ledger().record({
      at: Math.max(this.now, event.at),
      model: 'openai:gpt-4o-mini',
      spender: { kind: 'avatar', id: avatarId },
      scope: 'ch',
      purpose: 'turn',
      inputTokens: this.tokensPerTurn,
      outputTokens: 0,
      characters: 10,
    });
  }

  private check(effect: FloorEffect): void {
    const { config } = this;
    switch (effect.type) {
      case 'turn.claimed': {
        this.claims++;
        const at = effect.at;
        const max = config.channelMaxAvatarMessagesPerHour;
        if (max > 0) {
          const recent = this.messages.filter((t) => t > at - CAP_HOUR_MS).length;
          expect(recent + this.inFlight.size).toBeLessThan(max);
        }
        const ledger = this.ledger();
        const tokens = (avatarId?: string) => {
          const t = ledger.dayTotals(at, avatarId);
          return t.inputTokens + t.outputTokens;
        };
        if (config.avatarMaxTokensPerDay > 0)
          expect(tokens(effect.turn.avatarId)).toBeLessThan(config.avatarMaxTokensPerDay);
        if (config.maxTokensPerDay > 0) expect(tokens()).toBeLessThan(config.maxTokensPerDay);
        this.inFlight.set(effect.turn.turnId, effect.turn.avatarId);
        break;
      }
      case 'turn.consumed':
        this.inFlight.delete(effect.turnId);
        this.messages.push(effect.at);
        break;
      case 'turn.released':
        this.inFlight.delete(effect.turnId);
        break;
      case 'candidate.suppressed':
        if (effect.reason.startsWith('cap-')) this.capped++;
        break;
      case 'cap.notice': {
        expect(config.capNotice).toBe('notice');
        const key = `${effect.avatarId}/${effect.to.id}`;
        expect(effect.at).toBeGreaterThanOrEqual(this.noticeUntil.get(key) ?? Number.NEGATIVE_INFINITY);
        this.noticeUntil.set(key, effect.resetsAt);
        break;
      }
      default:
        break;
    }
  }
}

describe('caps over random traffic, across a restart', () => {
  it('never grant a turn past a cap, in any lane, and notify once per window', async () => {
    let capsReached = 0;
    await fc.assert(
      fc.asyncProperty(cases, async ({ traffic, restartAfter, tokensPerTurn }) => {
        const store = createMemoryStore();
        const newLedger = () => createUsageLedger({ store: store.documents, prices: builtInModelPrices });
        let ledger = newLedger();
        const config = traffic.world.config;
        const avatars = new Map(
          trafficRoster.map((a): [string, AvatarDefinition] => [
            a.id,
            { ...a, voice: 'on-request', tools: [], residentIn: [] },
          ]),
        );
        // The gate reads whichever ledger the process has now (a new one after the restart).
        const current = { dayTotals: (at: number, id?: string) => ledger.dayTotals(at, id) } as UsageLedger;
        const gate = ledgerSpendGate(current, config, avatars);
        const watch = new CapWatch(config, () => ledger, tokensPerTurn);
        let floor: RestartableFloor | undefined;
        const driver = new FloorDriver(
          traffic,
          (entry) => watch.observe(entry),
          'compiled',
          (options) => {
            floor = new RestartableFloor({ ...options, spendGate: gate }, (event) =>
              watch.beforeEvent(event),
            );
            return floor as unknown as ChannelFloor;
          },
        );
        for (let step = 0; driver.hasSteps; step++) {
          driver.step();
          if (step === restartAfter) {
            floor?.restart();
            await ledger.flush();
            ledger = newLedger();
            await ledger.load(watch.now);
          }
        }
        driver.finish();
        capsReached += watch.capped;
      }),
      { numRuns: fuzzRuns(100) },
    );
    // The property means something only if caps were reached.
    expect(capsReached).toBeGreaterThan(0);
  });
});
