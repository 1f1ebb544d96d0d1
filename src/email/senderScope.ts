/**
 * Who a preference line is about: a learned lesson names the sender it was learned from (an
 * address, `a@b.example`, or a whole domain, `@b.example`), and then applies to that sender only.
 */

/** An address, or a domain written with its `@` and nothing before it. */
const SENDER = /(?<![\w.+-])[\w.+-]*@[\w-]+(?:\.[\w-]+)+/gu;

/** A sender without an address, as a learned line names it: `from “CI Alerts”`. */
const NAMED = /\bfrom “([^”@]{1,200})”/gu;

/**
 * The senders a line names, lower case: addresses (`a@b.example`), domains (`@b.example`) and
 * senders without an address (`from “CI Alerts”`, kept as `name:cialerts`).
 */
export function namedSenders(text: string): string[] {
  const named = [...text.matchAll(NAMED)].map((m) => `name:${squeezed(m[1] as string)}`);
  return [...(text.match(SENDER) ?? []).map((s) => s.toLowerCase()), ...named];
}

/** `text` without the senders it names (what is left describes the kind of email). */
export function withoutSenders(text: string): string {
  return text.replace(NAMED, ' ').replace(SENDER, ' ');
}

/** How a learned line names a sender: its address, or `“Name”` for a sender without one. */
export function senderName(from: string): string {
  const address = senderAddress(from);
  if (address.includes('@')) return address;
  return `“${
    from
      .replace(/[“”"<>@]/gu, ' ')
      .replace(/\s+/gu, ' ')
      .trim()
      .slice(0, 200) || 'unknown'
  }”`;
}

const squeezed = (text: string) => text.replace(/[\s“”"]+/gu, '').toLowerCase();

/**
 * The address of a From header (`Name <a@b>` or `a@b`), lower case; without one, the header as
 * {@link namedSenders} keeps a name (`name:cialerts`).
 */
export function senderAddress(from: string): string {
  const address = /<([^<>]*@[^<>]*)>/u.exec(from)?.[1] ?? /[\w.+-]+@[\w-]+(?:\.[\w-]+)+/u.exec(from)?.[0];
  return address
    ? address.replace(/\s+/gu, '').toLowerCase()
    : `name:${squeezed(from.replace(/[<>@]/gu, ''))}`;
}

/**
 * Whether `address` is the sender `named`: the same address, or for a domain (`@b.example`) an
 * address at it or at one of its subdomains (`ci@builds.b.example`).
 */
export function isSender(address: string, named: string): boolean {
  if (!named.startsWith('@')) return address === named;
  // A sender without an address (`name:…`) holds no `@`.
  const at = address.lastIndexOf('@');
  if (at < 0) return false;
  const domain = address.slice(at + 1);
  const wanted = named.slice(1);
  return domain === wanted || domain.endsWith(`.${wanted}`);
}
