import { DiscordAPIError, HTTPError, RateLimitError } from 'discord.js';
import { TransportError } from '../../ports/transport.js';

/** Discord's JSON error codes the adapter acts on. */
export const DiscordApiCode = {
  unknownChannel: 10003,
  unknownMessage: 10008,
  unknownWebhook: 10015,
  maxWebhooks: 30007,
  missingAccess: 50001,
  missingPermissions: 50013,
  invalidFormBody: 50035,
} as const;

/** What the bot was doing, so an error can say what to fix. */
export interface SendContext {
  channelId: string;
  /** The channel's name, if known (`#general`). */
  channelName?: string;
  /** The permission the step needs (`Manage Webhooks`, `Send Messages`). */
  permission: string;
}

/** True when `error` is Discord saying the webhook no longer exists (deleted behind our back). */
export function isUnknownWebhook(error: unknown): boolean {
  return error instanceof DiscordAPIError && error.code === DiscordApiCode.unknownWebhook;
}

/**
 * True when `error` is Discord refusing the request's form (50035 Invalid Form Body: a limit such
 * as 2,000 characters of content or 6,000 of embeds): sending it again gets the same answer.
 */
export function isInvalidForm(error: unknown): error is DiscordAPIError {
  return error instanceof DiscordAPIError && error.code === DiscordApiCode.invalidFormBody;
}

/** True when `error` is Discord refusing for lack of a permission or access. */
export function isMissingPermission(error: unknown): boolean {
  return (
    error instanceof DiscordAPIError &&
    (error.code === DiscordApiCode.missingPermissions || error.code === DiscordApiCode.missingAccess)
  );
}

/**
 * A Discord REST failure as a {@link TransportError} with a code routing understands and a message
 * that says what to do: a missing permission is `TROUPE_TRANSPORT_FORBIDDEN` (not retried; names
 * the permission and the channel), a rate limit that surfaced anyway `TROUPE_TRANSPORT_RATE_LIMITED`
 * with Discord's wait, 5xx and network failures `TROUPE_TRANSPORT_UNAVAILABLE` (retried), an abort
 * `TROUPE_TRANSPORT_ABORTED`, any other refusal `TROUPE_TRANSPORT_FAILED` (not retried: sending the
 * same request again gets the same answer).
 */
export function toTransportError(error: unknown, context: SendContext): TransportError {
  if (error instanceof TransportError) return error;
  const where = context.channelName
    ? `#${context.channelName} (channel ${context.channelId})`
    : `channel ${context.channelId}`;
  const details = { channelId: context.channelId };
  if (error instanceof DiscordAPIError) {
    if (isMissingPermission(error)) {
      return new TransportError(
        'TROUPE_TRANSPORT_FORBIDDEN',
        `Discord refused: the bot lacks ${context.permission} in ${where}. Give the bot's role View Channel, Send Messages, Manage Webhooks and Read Message History there (Server Settings → Roles, or the channel's Permissions).`,
        {
          cause: error,
          retryable: false,
          details: { ...details, permission: context.permission, discordCode: error.code },
        },
      );
    }
    if (error.code === DiscordApiCode.maxWebhooks) {
      return new TransportError(
        'TROUPE_TRANSPORT_FAILED',
        `${where} already has 15 webhooks, Discord's limit, so Troupe cannot add its one. Delete an unused webhook in the channel's Integrations settings.`,
        { cause: error, retryable: false, details: { ...details, discordCode: error.code } },
      );
    }
    if (error.status === 429) {
      return new TransportError('TROUPE_TRANSPORT_RATE_LIMITED', `Discord rate-limited a send to ${where}.`, {
        cause: error,
        retryable: true,
        details,
      });
    }
    if (error.status >= 500) {
      return new TransportError(
        'TROUPE_TRANSPORT_UNAVAILABLE',
        `Discord failed (${error.status}) sending to ${where}; it will be retried.`,
        {
          cause: error,
          retryable: true,
          details,
        },
      );
    }
    return new TransportError(
      'TROUPE_TRANSPORT_FAILED',
      `Discord refused a message for ${where}: ${error.message} (code ${String(error.code)}).`,
      { cause: error, retryable: false, details: { ...details, discordCode: error.code } },
    );
  }
  if (error instanceof RateLimitError) {
    return new TransportError('TROUPE_TRANSPORT_RATE_LIMITED', `Discord rate-limited a send to ${where}.`, {
      cause: error,
      retryable: true,
      retryAfterMs: error.retryAfter,
      details,
    });
  }
  if (error instanceof HTTPError) {
    return new TransportError(
      'TROUPE_TRANSPORT_UNAVAILABLE',
      `Discord answered ${error.status} sending to ${where}; it will be retried.`,
      { cause: error, retryable: error.status >= 500 || error.status === 408, details },
    );
  }
  if (error instanceof Error && error.name === 'AbortError') {
    return new TransportError('TROUPE_TRANSPORT_ABORTED', `A send to ${where} was aborted.`, {
      cause: error,
      retryable: true,
      details,
    });
  }
  return new TransportError(
    'TROUPE_TRANSPORT_UNAVAILABLE',
    `Could not reach Discord sending to ${where}; it will be retried.`,
    {
      cause: error,
      retryable: true,
      details,
    },
  );
}
