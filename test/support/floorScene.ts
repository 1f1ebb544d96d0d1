/**
 * A channel floor driven like a chat transcript, for tests that follow one conversation: people
 * speak, avatars deliver or fail their turns, time is passed explicitly.
 */
import { type CoordinationConfig, defaultCoordinationConfig } from '../../src/config/coordinationConfig.js';
import { ChannelFloor } from '../../src/floor/channelFloor.js';
import type { AvatarProfile, FloorEffect, FloorEvent, TurnClaim } from '../../src/floor/floorTypes.js';
import { claimsIn, ofType } from './floorTraffic.js';

export type Person = { kind: 'human'; id: string; name: string };
export const ANN: Person = { kind: 'human', id: 'u-ann', name: 'Ann' };
export const BOB: Person = { kind: 'human', id: 'u-bob', name: 'Bob' };
export const CY: Person = { kind: 'human', id: 'u-cy', name: 'Cy' };

export const SCENE_ROSTER: AvatarProfile[] = [
  { id: 'luna', name: 'Luna', topics: ['astronomy'] },
  { id: 'milo', name: 'Milo' },
  { id: 'zed', name: 'Zed' },
];

type Extras = { mentions?: string[]; replyTo?: { messageId: string; avatarId?: string } };

export class FloorScene {
  readonly floor: ChannelFloor;
  private seq = 0;

  constructor(
    config: Partial<CoordinationConfig> = {},
    present: string[] = ['luna', 'milo', 'zed'],
    roster: AvatarProfile[] = SCENE_ROSTER,
  ) {
    this.floor = new ChannelFloor({
      channelId: 'ch',
      config: { ...defaultCoordinationConfig, ...config },
      roster,
      present,
    });
  }

  send(event: FloorEvent): FloorEffect[] {
    return this.floor.handle(event);
  }

  say(at: number, who: Person, text: string, extras: Extras = {}, messageId = `h${++this.seq}`) {
    return this.send({ type: 'message', at, messageId, author: who, text, ...extras });
  }

  avatarSays(at: number, avatarId: string, text: string, extras: Extras = {}, messageId = `a${++this.seq}`) {
    return this.send({
      type: 'message',
      at,
      messageId,
      author: { kind: 'avatar', id: avatarId },
      text,
      ...extras,
    });
  }

  deliver(at: number, turnId: string, text: string, extras: Extras = {}, messageId = `${turnId}/m`) {
    return this.send({ type: 'turn.delivered', at, turnId, messageId, text, ...extras });
  }

  fail(at: number, turnId: string, reason = 'model timed out') {
    return this.send({ type: 'turn.failed', at, turnId, reason });
  }

  summon(at: number, avatarId: string, by: Person = ANN, messageId?: string) {
    return this.send({
      type: 'summon',
      at,
      avatarId,
      by: { id: by.id, name: by.name },
      ...(messageId ? { messageId } : {}),
    });
  }

  dismiss(at: number, avatarId: string) {
    return this.send({ type: 'dismiss', at, avatarId });
  }

  tick(at: number) {
    return this.send({ type: 'tick', at });
  }

  presence(avatarId: string) {
    return this.floor.view().present.find((p) => p.id === avatarId);
  }
}

/** The single claim among effects; throws when there is not exactly one. */
export function onlyClaim(effects: readonly FloorEffect[]): TurnClaim {
  const claims = claimsIn(effects);
  if (claims.length !== 1)
    throw new Error(`expected one claim, got ${claims.map((c) => c.avatarId).join(', ') || 'none'}`);
  return claims[0] as TurnClaim;
}

/** Who was held back, at which rung and why (with the words, where the floor gives them). */
export function quiet(effects: readonly FloorEffect[]) {
  return ofType(effects, 'candidate.suppressed').map(({ avatarId, rung, reason, detail }) => ({
    avatarId,
    ...(rung ? { rung } : {}),
    reason,
    ...(detail ? { detail } : {}),
  }));
}

/** Who got a turn, at which rung. */
export function turns(effects: readonly FloorEffect[]) {
  return claimsIn(effects).map((c) => `${c.avatarId}@${c.rung}`);
}
