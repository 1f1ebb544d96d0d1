/**
 * One message of a channel's recent history, as the runtime hands it to prompt building: who wrote
 * it (a person or an avatar, always with a display name), when, and its text.
 */
export interface ChannelHistoryEntry {
  /** Platform message id. */
  messageId: string;
  /** When it was written (epoch ms). */
  at: number;
  /** Who wrote it. Avatars carry their display name too, so prompts can say who spoke. */
  author: { kind: 'human' | 'avatar'; id: string; name: string };
  /** The message text as delivered (voice prefixes already stripped). */
  text: string;
}
