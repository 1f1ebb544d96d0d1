/**
 * Who a preference line is about: a learned lesson names the sender it was learned from (an
 * address, `a@b.example`, or a whole domain, `@b.example`), and then applies to that sender only.
 */

/** An address, or a domain written with its `@` and nothing before it. */
const SENDER = /(?<![\w.+-])[\w.+-]*@[\w-]+(?:\.[\w-]+)+/gu;

/** The senders a line names, lower case: addresses (`a@b.example`) and domains (`@b.example`). */
export function namedSenders(text: string): string[] {
  return (text.match(SENDER) ?? []).map((s) => s.toLowerCase().replace(/\.+$/u, ''));
}

/** `text` without the senders it names (what is left describes the kind of email). */
export function withoutSenders(text: string): string {
  return text.replace(SENDER, ' ');
}

/** The address of a From header (`Name <a@b>` or `a@b`), lower case; the header itself without one. */
export function senderAddress(from: string): string {
  const address = /<([^<>]*@[^<>]*)>/u.exec(from)?.[1] ?? /[\w.+-]+@[\w-]+(?:\.[\w-]+)+/u.exec(from)?.[0];
  return (address ?? from).replace(/\s+/gu, '').toLowerCase();
}

/**
 * Whether `address` is the sender `named`: the same address, or for a domain (`@b.example`) an
 * address at it or at one of its subdomains (`ci@builds.b.example`).
 */
export function isSender(address: string, named: string): boolean {
  if (!named.startsWith('@')) return address === named;
  const at = address.lastIndexOf('@');
  if (at < 0) return false;
  const domain = address.slice(at + 1);
  const wanted = named.slice(1);
  return domain === wanted || domain.endsWith(`.${wanted}`);
}
