/**
 * What Troupe Studio shows: one projection of the runtime's inspection stream, the channel floors'
 * views and the email assistant's changes. Plain JSON data, the same for the page (GET /api/state
 * and the live stream), `troupe chat`'s `/who` and the tests.
 */
import type { StateValue } from 'xstate';
import type { DayUsage } from '../ports/usage.js';

/** The machines whose actors the studio lists (their ids are the charts' ids). */
export type StudioMachine = 'avatarPresence' | 'conversationThread' | 'emailLifecycle';

/** One live (or lately finished) actor: a presence, a thread or an email. */
export interface StudioActor {
  /** `presence:<channelKey>:<avatarId>`, `thread:<threadId>` or `email:<emailId>`. */
  id: string;
  kind: 'presence' | 'thread' | 'email';
  machine: StudioMachine;
  label: string;
  channelKey?: string;
  /** `done` once a thread ended, a presence was dismissed or an email finished. */
  status: 'active' | 'done';
  /** The machine's state value. */
  value: StateValue;
  /**
   * Ids of the active state nodes (xstate ids, e.g. `conversationThread.active`): the SVG charts
   * draw each state as an element with id `state:<id>`, so the page highlights these.
   */
  stateIds: string[];
  /** A JSON-safe copy of what the actor holds. */
  context: Record<string, unknown>;
  updatedAt: number;
}

/** One line of the recent events. */
export interface StudioEvent {
  seq: number;
  at: number;
  actorId?: string;
  channelKey?: string;
  type: string;
  summary: string;
}

/** A field of an edit form, from the tool's schema. */
export interface EditField {
  name: string;
  label: string;
  type: 'string' | 'text' | 'number' | 'boolean' | 'datetime' | 'string[]' | 'enum';
  required: boolean;
  options?: string[];
  /** The proposed value. */
  value: unknown;
}

/** A human-in-the-loop interrupt waiting for an answer. */
export interface StudioInterrupt {
  id: string;
  emailId: string;
  createdAt: number;
  action: string;
  /** Markdown text: the email, and what the assistant proposes. */
  description: string;
  allow: { ignore: boolean; respond: boolean; edit: boolean; accept: boolean };
  args: Record<string, unknown>;
  /** The edit form (empty when editing is not allowed). */
  fields: EditField[];
}

/** An interrupt that was answered, and what the answer did. */
export interface StudioAnswer {
  interruptId: string;
  emailId: string;
  at: number;
  type: 'accept' | 'edit' | 'response' | 'ignore';
  /** The email's lifecycle value after the answer (as last seen). */
  emailState: StateValue | null;
  /** The memory version the answer produced, if it updated one. */
  memory?: { namespace: string; version: number; summary: string };
}

/** An avatar of the playground channel. */
export interface PlaygroundAvatar {
  id: string;
  name: string;
  emoji?: string;
  present: boolean;
}

/** A message of the playground channel. */
export interface PlaygroundMessage {
  id: string;
  at: number;
  author: { kind: 'human' | 'avatar'; id: string; name: string };
  text: string;
  /** The id of the message this one replies to. */
  replyTo?: string;
  /** Why the avatar spoke (the floor's reason for its turn). */
  why?: string;
}

/** The playground: a channel where the person chats with the avatars. */
export interface StudioPlayground {
  channel: { platform: string; id: string };
  avatars: PlaygroundAvatar[];
  messages: PlaygroundMessage[];
  /** Set when the page may only watch this channel (nothing is posted, summoned or dismissed): why. */
  readOnly?: string;
}

/** Composed-response telemetry from the `agent_event_logs` collection. */
export interface StudioTelemetry {
  modes: Record<string, number>;
  total: number;
  recent: { at: number; mode: string; origin: string }[];
}

/** A cap an avatar reached, as the floor told it (a `cap-*` suppression or a cap notice). */
export interface StudioCapReached {
  /** When the floor last told it (epoch ms). */
  at: number;
  avatarId: string;
  channelKey: string;
  /** `cap-channel-hour`, `cap-avatar-tokens`, `cap-avatar-cost`, `cap-total-tokens` or `cap-total-cost`. */
  reason: string;
  detail: string;
  /** A notice to a person (`cap.notice`) rather than a turn left out. */
  notice: boolean;
}

/**
 * Model usage of the UTC day from the runtime's usage ledger, per avatar with its daily caps (its
 * own where it sets them), and the caps the floor reported reached.
 */
export interface StudioUsage extends DayUsage {
  /** Newest last, one per avatar, channel, reason and kind (the latest time), the last {@link STUDIO_LIMITS.capsReached}. */
  capsReached: StudioCapReached[];
}

/** Everything the studio shows. */
export interface StudioState {
  /** Goes up by one on every change. */
  version: number;
  /** The runtime clock's time (simulated in tests). */
  now: number;
  actors: StudioActor[];
  /** The last {@link STUDIO_LIMITS.events}, newest last. */
  events: StudioEvent[];
  /** Pending, oldest first. */
  interrupts: StudioInterrupt[];
  /** Newest first, the last {@link STUDIO_LIMITS.answered}. */
  answered: StudioAnswer[];
  playground: StudioPlayground;
  counters: Record<string, number>;
  telemetry: StudioTelemetry;
  usage: StudioUsage;
}

/** How much the projection keeps. */
export const STUDIO_LIMITS = {
  events: 200,
  messages: 200,
  finishedActors: 100,
  answered: 50,
  telemetryRecent: 50,
  capsReached: 50,
} as const;
