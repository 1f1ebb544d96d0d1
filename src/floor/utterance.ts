import type { Author } from './floorTypes.js';

/** A message as the floor reads it: a person's or avatar's message, or an avatar's delivered turn. */
export interface Utterance {
  at: number;
  messageId: string;
  author: Author;
  text: string;
  mentions?: readonly string[];
  replyTo?: { messageId: string; avatarId?: string | undefined };
  /** The thread the utterance was spoken in, when it was an avatar's turn in one. */
  threadId?: string;
  /** A greeting: it invites answers only from those it addresses (the follow-up comes next). */
  announcement?: boolean;
}
