import type { InspectionEvent } from '../actors/inspectionEvent.js';
import { channelKey } from '../actors/runtime.js';
import type { FloorEffect } from '../floor/floorTypes.js';
import type { StudioEvent } from './studioState.js';

/** The studio id of an avatar's presence in a channel. */
export const presenceActorId = (channelKey: string, avatarId: string) => `presence:${channelKey}:${avatarId}`;
/** The studio id of a thread. */
export const threadActorId = (threadId: string) => `thread:${threadId}`;
/** The studio id of an email. */
export const emailActorId = (emailId: string) => `email:${emailId}`;

/** An event line without its sequence number. */
export type EventLine = Omit<StudioEvent, 'seq'>;

function effectLine(channelKey: string, effect: FloorEffect, name: (id: string) => string): EventLine {
  const base = { at: effect.at, channelKey, type: effect.type };
  const presence = (avatarId: string) => ({ ...base, actorId: presenceActorId(channelKey, avatarId) });
  switch (effect.type) {
    case 'turn.claimed':
      return {
        ...presence(effect.turn.avatarId),
        summary: `${name(effect.turn.avatarId)} claims a turn (${effect.turn.kind}, rung ${effect.turn.rung}): ${effect.turn.reason}`,
      };
    case 'turn.consumed':
      return {
        ...presence(effect.avatarId),
        summary: `${name(effect.avatarId)} spoke (rung ${effect.rung})`,
      };
    case 'turn.released':
      return {
        ...presence(effect.avatarId),
        summary: `${name(effect.avatarId)} gave up a turn: ${effect.reason}`,
      };
    case 'candidate.suppressed':
      return {
        ...presence(effect.avatarId),
        summary: `${name(effect.avatarId)} stays quiet: ${effect.reason}${effect.detail ? ` (${effect.detail})` : ''}`,
      };
    case 'thread.opened':
      return {
        ...base,
        actorId: threadActorId(effect.threadId),
        summary: `thread opened (${effect.mode}) with ${effect.participants.map(name).join(', ')}`,
      };
    case 'thread.ended':
      return {
        ...base,
        actorId: threadActorId(effect.threadId),
        summary: `thread ${effect.outcome} after ${effect.turns} turn${effect.turns === 1 ? '' : 's'}: ${effect.detail}`,
      };
    case 'presence.summoned':
      return { ...presence(effect.avatarId), summary: `${name(effect.avatarId)} summoned` };
    case 'presence.dismissed':
      return { ...presence(effect.avatarId), summary: `${name(effect.avatarId)} dismissed` };
    case 'event.rejected':
      return { ...base, summary: `event rejected: ${effect.code} ${effect.message}` };
    case 'cap.notice':
      return {
        ...presence(effect.avatarId),
        summary: `${name(effect.avatarId)} reached a cap (${effect.reason}: ${effect.detail}); ${effect.to.name} is told`,
      };
  }
}

/** One line for the studio's recent events, naming avatars by `name`. */
export function eventLine(event: InspectionEvent, name: (id: string) => string): EventLine {
  switch (event.type) {
    case 'floor.effect':
      return effectLine(event.channelKey, event.effect, name);
    case 'actor.activated':
      return { at: event.at, channelKey: event.channelKey, type: event.type, summary: 'channel loaded' };
    case 'actor.stopped':
      return {
        at: event.at,
        channelKey: event.channelKey,
        type: event.type,
        summary: `channel stopped (${event.reason})`,
      };
    case 'turn.generated':
      return {
        at: event.at,
        channelKey: event.channelKey,
        actorId: presenceActorId(event.channelKey, event.avatarId),
        type: event.type,
        summary: `${name(event.avatarId)} wrote ${event.chars} characters (${event.model})`,
      };
    case 'turn.generation-failed':
      return {
        at: event.at,
        channelKey: event.channelKey,
        actorId: presenceActorId(event.channelKey, event.avatarId),
        type: event.type,
        summary: `${name(event.avatarId)} could not write a reply: ${event.code}`,
      };
    case 'turn.silent':
      return {
        at: event.at,
        channelKey: event.channelKey,
        actorId: presenceActorId(event.channelKey, event.avatarId),
        type: event.type,
        summary: `${name(event.avatarId)} chose to stay silent`,
      };
    case 'response.prepared':
      return {
        at: event.at,
        channelKey: event.channelKey,
        type: event.type,
        summary: `response prepared (${event.origin}${event.guaranteed ? ', guaranteed' : ''})`,
      };
    case 'routing.outcome': {
      const o = event.outcome;
      const who = o.origin.avatarId !== undefined ? name(o.origin.avatarId) : 'Troupe';
      const key = channelKey(o.channel);
      return {
        at: event.at,
        channelKey: key,
        ...(o.origin.avatarId !== undefined ? { actorId: presenceActorId(key, o.origin.avatarId) } : {}),
        type: event.type,
        summary: o.sent
          ? `${who}'s reply delivered${o.duplicate ? ' (duplicate)' : ''}`
          : `${who}'s reply not delivered: ${o.error?.code ?? 'unknown'}`,
      };
    }
  }
}
