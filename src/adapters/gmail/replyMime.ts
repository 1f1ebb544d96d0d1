import { composeReply, type ReplyEnvelope } from '../../email/replyMessage.js';
import type { EmailReply } from '../../ports/mailbox.js';

export { replySubject } from '../../email/replyMessage.js';

/** A header value as RFC 2047 encoded words when it is not plain ASCII (UTF-8, base64, ≤ 75 chars each). */
export function encodeHeaderWord(value: string): string {
  if (/^[\x20-\x7e]*$/u.test(value)) return value;
  const words: string[] = [];
  let chunk = '';
  // Split on characters, not bytes, so no character is cut between two encoded words.
  for (const char of value) {
    if (Buffer.byteLength(chunk + char, 'utf8') > 45) {
      words.push(chunk);
      chunk = '';
    }
    chunk += char;
  }
  if (chunk) words.push(chunk);
  return words.map((w) => `=?UTF-8?B?${Buffer.from(w, 'utf8').toString('base64')}?=`).join('\r\n ');
}

/**
 * The RFC 5322 message of a reply ({@link composeReply}), as Gmail's `raw` wants it (base64url):
 * In-Reply-To and References for the thread, a `Re:` subject, the given Message-ID (so a resend
 * can be found), names and a non-ASCII subject RFC 2047 encoded, the body UTF-8 in base64.
 *
 * @throws TroupeError `TROUPE_EMAIL_INVALID` when the recipients are not a list of email addresses.
 */
export async function replyRaw(reply: EmailReply, envelope: ReplyEnvelope): Promise<string> {
  return Buffer.from(await composeReply(reply, envelope), 'utf8').toString('base64url');
}
