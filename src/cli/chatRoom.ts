import type { AvatarDefinition } from '../actors/avatarDefinition.js';
import type { Runtime } from '../actors/runtimeOptions.js';
import type { TerminalTransport } from '../adapters/terminal/terminalTransport.js';
import type { CoordinationConfig } from '../config/coordinationConfig.js';
import type { ChannelRef } from '../ports/outgoingResponse.js';
import type { StudioStore } from '../studio/studioStore.js';
import type { ChatTerminal } from './chatTerminal.js';

/** One chat session as its commands see it: the channel, who is in it, and how to print. */
export interface ChatRoom {
  runtime: Runtime;
  transport: TerminalTransport;
  /** `terminal:<id>`. */
  channel: ChannelRef;
  channelKey: string;
  /** The person at the keyboard. */
  human: { id: string; name: string };
  /** The runtime's avatars as they are now (summoning may create some). */
  readonly avatars: readonly AvatarDefinition[];
  /** The coordination settings the runtime runs with (its caps among them). */
  config: CoordinationConfig;
  /** The studio's view of the runtime. */
  studioStore: StudioStore;
  terminal: ChatTerminal;
  dim: (text: string) => string;
  /** Prints a line. */
  say(text: string): void;
  /** Prints a line marked as a problem with what was typed. */
  oops(text: string): void;
}

/** Whether the avatar lives in the room's channel (is there from the start). */
export function livesHere(room: ChatRoom, avatar: AvatarDefinition): boolean {
  return avatar.residentIn.includes(room.channelKey);
}

/** The avatars in the channel now; before the floor is loaded, those who live there. */
export function presentIds(room: ChatRoom): string[] {
  const view = room.runtime.view(room.channel);
  return view
    ? view.present.map((p) => p.id)
    : room.avatars.filter((a) => livesHere(room, a)).map((a) => a.id);
}
