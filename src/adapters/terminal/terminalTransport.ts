import {
  type Transport,
  TransportError,
  type TransportLimits,
  type TransportMessage,
  type TransportReceipt,
} from '../../ports/transport.js';
import { OldestKey } from '../oldestKey.js';

/** Who wrote a terminal message. */
export type TerminalAuthor =
  | { kind: 'human'; id: string; name: string }
  | { kind: 'avatar'; id: string; name: string; emoji?: string };

/** A message in the terminal's shared numbering, human or avatar. */
export interface TerminalMessage {
  /** 1, 2, 3, ...: what people type to reply (`>3 ...`). */
  number: number;
  /** The number as the platform message id (`"3"`), as routing outcomes and the floor see it. */
  messageId: string;
  channelId: string;
  author: TerminalAuthor;
  text: string;
  replyTo?: { messageId: string };
  /** `sent`: delivered by routing through {@link TerminalTransport.send}; `inbound`: recorded by the program. */
  source: 'sent' | 'inbound';
  /** The idempotency key routing sent it with (sent messages only). */
  idempotencyKey?: string;
}

/** Called for every new message, with its number (duplicates are not announced again). */
export type TerminalMessageListener = (message: TerminalMessage, number: number) => void;

/** How a {@link TerminalTransport} is made. */
export interface TerminalTransportOptions {
  /** How many recent messages are kept for reply lookup (default 500). */
  keep?: number;
  /** A first listener, as if passed to {@link TerminalTransport.onMessage}. */
  onMessage?: TerminalMessageListener;
  /**
   * Prefix of message ids (`"s1-3"` for number 3), so ids stay unique across sessions whose state
   * is kept in a store. Default none (`"3"`).
   */
  idPrefix?: string;
  /**
   * The terminal channels (ids) this terminal is: a reply an earlier run left unsettled in any
   * other is left for the session that has it open (see {@link Transport.serves}). Default: all.
   */
  channels?: readonly string[];
}

const DEFAULT_KEEP = 500;

/**
 * The transport of channel kind `terminal`: a chat in a terminal, one person at a keyboard. Every
 * message, sent by an avatar or typed by the person (recorded with {@link recordInbound}), gets
 * the next number in one shared sequence, so anyone can reply to any message by its number. It
 * keeps the last `keep` messages for that lookup, deduplicates on the idempotency key like a
 * platform with idempotent sends (a key it already took returns the same number and announces
 * nothing), and tells listeners about each new message. It prints nothing itself: presentation is
 * the chat program's job. Text only: no voice, no attachments.
 */
export class TerminalTransport implements Transport {
  readonly kind = 'terminal';
  /** Sends stay in this process. */
  readonly local = true;
  readonly limits: TransportLimits = { maxTextLength: 2000, voice: false, attachments: false };
  private readonly keep: number;
  private readonly messages = new Map<number, TerminalMessage>();
  /** The oldest kept message, in constant time however many are kept (see {@link OldestKey}). */
  private readonly oldest = new OldestKey<number>(this.messages);
  private readonly byKey = new Map<string, string>();
  private readonly listeners = new Set<TerminalMessageListener>();
  private seq = 0;
  private readonly idPrefix: string;
  private readonly channels: ReadonlySet<string> | undefined;

  constructor(options: TerminalTransportOptions = {}) {
    this.keep = Math.max(1, Math.floor(options.keep ?? DEFAULT_KEEP));
    this.idPrefix = options.idPrefix ?? '';
    this.channels = options.channels ? new Set(options.channels) : undefined;
    if (options.onMessage) this.listeners.add(options.onMessage);
  }

  /** Subscribes to new messages; returns the unsubscribe function. */
  onMessage(listener: TerminalMessageListener): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  /** Whether this terminal is the channel (every channel, unless made with `channels`). */
  serves(channelId: string): boolean {
    return this.channels === undefined || this.channels.has(channelId);
  }

  async send(message: TransportMessage): Promise<TransportReceipt> {
    const known = this.byKey.get(message.idempotencyKey);
    if (known !== undefined) return { messageId: known, duplicate: true };
    const text = message.text ?? '';
    if (text.trim() === '') {
      throw new TransportError(
        'TROUPE_TRANSPORT_UNSUPPORTED',
        'The terminal shows text only; this message has none.',
        {
          retryable: false,
        },
      );
    }
    const speaker = message.speaker;
    const author: TerminalAuthor = speaker
      ? {
          kind: 'avatar',
          id: speaker.avatarId,
          name: speaker.name,
          ...(speaker.emoji ? { emoji: speaker.emoji } : {}),
        }
      : { kind: 'avatar', id: 'troupe', name: 'Troupe' };
    const stored = this.add(message.idempotencyKey, {
      channelId: message.channelId,
      author,
      text,
      ...(message.replyTo ? { replyTo: { messageId: message.replyTo.messageId } } : {}),
      source: 'sent',
      idempotencyKey: message.idempotencyKey,
    });
    return { messageId: stored.messageId };
  }

  /** Gives a message written at the terminal (or scripted) the next number, and announces it. */
  recordInbound(input: {
    channelId: string;
    author: TerminalAuthor;
    text: string;
    replyTo?: { messageId: string };
  }): TerminalMessage {
    return this.add(undefined, { ...input, source: 'inbound' });
  }

  /** A recent message by number (`3`, `"3"` or `"#3"`) or by message id, if still kept. */
  lookup(number: number | string): TerminalMessage | undefined {
    const text =
      typeof number === 'string' && this.idPrefix && number.startsWith(this.idPrefix)
        ? number.slice(this.idPrefix.length)
        : number;
    const n = typeof text === 'number' ? text : Number(text.replace(/^#/, ''));
    return Number.isInteger(n) ? this.messages.get(n) : undefined;
  }

  /** The kept messages, oldest first. */
  recent(): TerminalMessage[] {
    return [...this.messages.values()];
  }

  /** The number the next message will get. */
  get nextNumber(): number {
    return this.seq + 1;
  }

  private add(
    key: string | undefined,
    fields: Omit<TerminalMessage, 'number' | 'messageId'>,
  ): TerminalMessage {
    this.seq += 1;
    const message: TerminalMessage = {
      number: this.seq,
      messageId: `${this.idPrefix}${this.seq}`,
      ...fields,
    };
    this.messages.set(message.number, message);
    this.oldest.changed();
    // Taken before anyone is told: a listener that throws must not make a retry send it twice.
    if (key !== undefined) this.byKey.set(key, message.messageId);
    while (this.messages.size > this.keep) {
      const oldest = this.oldest.next();
      if (oldest === undefined) break;
      this.messages.delete(oldest);
    }
    for (const listener of [...this.listeners]) listener(message, message.number);
    return message;
  }
}
