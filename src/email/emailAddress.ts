import addressparser from 'nodemailer/lib/addressparser';

/** One mailbox of an address header: a display name (possibly empty) and the address. */
export interface EmailAddress {
  name: string;
  address: string;
}

/** The most recipients a reply may have. */
export const MAX_RECIPIENTS = 50;

// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/u;
const CONTROLS = new RegExp(CONTROL.source, 'gu');
const ATOM = "[\\p{L}\\p{N}!#$%&'*+/=?^_`{|}~-]+";
const LABEL = '[\\p{L}\\p{N}](?:[\\p{L}\\p{N}-]*[\\p{L}\\p{N}])?';
const ADDRESS = new RegExp(`^${ATOM}(?:\\.${ATOM})*@${LABEL}(?:\\.${LABEL})*$`, 'u');

/** Whether `address` is a plain mailbox address (`local@domain`, letters of any script allowed). */
export function isEmailAddress(address: string): boolean {
  return address.length <= 320 && ADDRESS.test(address);
}

/**
 * Every mailbox of an address header as read from an email (`"Rossi, Marco" <marco@acme.dev>,
 * other@x`): quoted names keep their commas, groups are flattened, entries without an address are
 * left out. A folded header is unfolded; a line break not followed by a space ends the header (what
 * follows would be another header: `a@x\r\nCc: b@y` is `a@x`). Lenient: for reading what others
 * wrote; see {@link parseRecipients} for what a reply may be sent to.
 */
export function parseAddressHeader(header: string): EmailAddress[] {
  const firstLine = header.replace(/\r?\n[ \t]+/gu, ' ').split(/[\r\n]/u)[0] ?? '';
  return addressparser(firstLine, { flatten: true })
    .filter((a) => a.address !== '')
    .map((a) => ({ name: a.name.replace(CONTROLS, ' ').trim(), address: a.address.trim() }));
}

/**
 * The recipients of a reply (`Name <addr>, other@x`), or why they cannot be used: a line break or
 * control character (which would add headers), a group, an entry that is not an address, none at
 * all, or more than {@link MAX_RECIPIENTS}.
 */
export function parseRecipients(
  value: string,
): { ok: true; recipients: EmailAddress[] } | { ok: false; problem: string } {
  if (CONTROL.test(value)) return { ok: false, problem: 'it holds a line break or a control character' };
  // The usual recipient, one bare address, needs no parser (every draft's `to` is checked).
  const bare = value.trim();
  if (isEmailAddress(bare)) return { ok: true, recipients: [{ name: '', address: bare }] };
  const entries = addressparser(value);
  if (entries.some((e) => e.group !== undefined))
    return { ok: false, problem: 'it holds an address group (“name: …;”)' };
  const recipients = parseAddressHeader(value);
  const bad = entries
    .filter((e) => e.group === undefined && !isEmailAddress(e.address?.trim() ?? ''))
    .map((e) => JSON.stringify(e.address || e.name));
  if (bad.length > 0) return { ok: false, problem: `${bad.slice(0, 3).join(', ')} is not an email address` };
  if (recipients.length === 0) return { ok: false, problem: 'it names no email address' };
  if (recipients.length > MAX_RECIPIENTS)
    return { ok: false, problem: `it names ${recipients.length} recipients; at most ${MAX_RECIPIENTS}` };
  return { ok: true, recipients };
}

/**
 * An address list written out for people and headers (`"Rossi, Marco" <marco@acme.dev>,
 * other@x`): a name is quoted when it holds anything beyond letters, digits and spaces, with its
 * quotes and backslashes escaped. Non-ASCII names are left as they are (a MIME writer encodes them).
 */
export function formatAddressList(list: readonly EmailAddress[]): string {
  return list
    .map(({ name, address }) => {
      if (!name) return address;
      const plain = /^[\p{L}\p{N} ]+$/u.test(name);
      return `${plain ? name : `"${name.replace(/[\\"]/gu, (c) => `\\${c}`)}"`} <${address}>`;
    })
    .join(', ');
}

/** The sender's address from a From header (its first mailbox), or the header trimmed when it names none. */
export function senderAddress(from: string): string {
  return parseAddressHeader(from)[0]?.address ?? from.trim();
}

/**
 * The name to greet a sender by: the first word of the display name (`Marco` for `Marco Rossi`,
 * and for `"Rossi, Marco"`, written last name first), else the address's local part
 * (`dana.kim@…` → `Dana`); `there` when neither gives a name.
 */
export function greetingName(from: string): string {
  const sender = parseAddressHeader(from)[0];
  let name = sender?.name ?? '';
  if (name.includes('@')) name = '';
  const comma = name.split(',');
  if (comma.length === 2 && comma[1]?.trim()) name = comma[1].trim();
  const source = name || sender?.address.split('@')[0] || '';
  // A title written with its dot (`Dr. Jane`) is not the name.
  const words = (name ? source.split(/\s+/u) : source.split(/[._+-]+/u)).filter((w) => /\p{L}/u.test(w));
  const first = words.find((w) => !w.endsWith('.')) ?? words[0] ?? '';
  const word = first.replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, '');
  if (!word || word.length > 40) return 'there';
  return word.charAt(0).toUpperCase() + word.slice(1);
}
