import type { FloorEffect } from '../floor/floorTypes.js';
import type { RoutingOutcome } from '../ports/routingOutcome.js';

/**
 * What the runtime tells observers (the `inspection$` stream): every floor decision, every stage a
 * turn passes through, actors coming and going. For logs, dashboards, transcripts and tests.
 */
export type InspectionEvent =
  | { type: 'floor.effect'; at: number; channelKey: string; effect: FloorEffect }
  | { type: 'actor.activated'; at: number; channelKey: string }
  | {
      type: 'actor.stopped';
      at: number;
      channelKey: string;
      reason: 'finished' | 'passivated' | 'conflict' | 'runtime-stopped';
    }
  | {
      type: 'turn.generated';
      at: number;
      channelKey: string;
      turnId: string;
      avatarId: string;
      model: string;
      chars: number;
      /** How many channel messages the prompt showed the avatar (absent: the model reads no prompt). */
      seen?: number;
    }
  | {
      type: 'turn.generation-failed';
      at: number;
      channelKey: string;
      turnId: string;
      avatarId: string;
      code: string;
    }
  | {
      type: 'response.prepared';
      at: number;
      channelKey: string;
      idempotencyKey: string;
      origin: 'answer' | 'error' | 'fallback' | 'notice';
      guaranteed: boolean;
      voice: boolean;
    }
  | { type: 'turn.silent'; at: number; channelKey: string; turnId: string; avatarId: string }
  | { type: 'routing.outcome'; at: number; outcome: RoutingOutcome };
