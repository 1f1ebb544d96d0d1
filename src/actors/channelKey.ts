import type { ChannelRef } from '../ports/outgoingResponse.js';

/**
 * The key of a channel: `kind:id`, with `%` and `:` in the kind escaped (`%25`, `%3A`), so the
 * first `:` always ends the kind and two channels never share a key (kind `a:b` with id `c` and
 * kind `a` with id `b:c` would otherwise both be `a:b:c`: one actor, one history). Kinds without
 * those characters keep the plain form, so keys stored before stay valid.
 */
export function channelKey(channel: ChannelRef): string {
  const kind = channel.kind;
  return kind.includes(':') || kind.includes('%')
    ? `${kind.replaceAll('%', '%25').replaceAll(':', '%3A')}:${channel.id}`
    : `${kind}:${channel.id}`;
}

/** The channel a key (`kind:id`) names. */
export function channelFromKey(key: string): ChannelRef {
  const split = key.indexOf(':');
  const kind = key.slice(0, split);
  return {
    kind: kind.includes('%') ? kind.replace(/%(?:25|3A)/gu, (m) => (m === '%25' ? '%' : ':')) : kind,
    id: key.slice(split + 1),
  };
}
