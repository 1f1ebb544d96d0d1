import type { EmailReply } from '../../ports/mailbox.js';

/** The subject of a reply: one `Re:` in front, never `Re: Re:` (also after `RE:`, `Re[2]:`, `AW:`-less forms). */
export function replySubject(subject: string): string {
  const bare = subject.replace(/^(\s*re(\[\d+\])?\s*:\s*)+/iu, '').trim();
  return `Re: ${bare}`;
}

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

/** An address header (`Name <a@b>`, comma-separated) with non-ASCII display names encoded. */
function encodeAddresses(value: string): string {
  return value
    .split(',')
    .map((part) => {
      const match = /^\s*"?([^"<]*?)"?\s*<([^>]+)>\s*$/u.exec(part);
      if (!match) return part.trim();
      const name = (match[1] ?? '').trim();
      return name ? `${encodeHeaderWord(name)} <${match[2]}>` : `<${match[2]}>`;
    })
    .join(', ');
}

/** Header values never carry a line break (a header injection from a model or an email). */
const oneLine = (value: string) => value.replace(/[\r\n]+/gu, ' ').trim();

/**
 * The RFC 2822 message of a reply, as Gmail's `raw` wants it (base64url): In-Reply-To and
 * References for the thread, a `Re:` subject, the given Message-ID (so a resend can be found),
 * UTF-8 subject encoded (RFC 2047), the body UTF-8 in base64.
 */
export function replyRaw(
  reply: EmailReply,
  options: { from: string; messageId: string; date?: Date },
): string {
  const headers = [
    `From: ${encodeAddresses(oneLine(options.from))}`,
    `To: ${encodeAddresses(oneLine(reply.to))}`,
    `Subject: ${encodeHeaderWord(oneLine(replySubject(reply.subject)))}`,
    `Message-ID: ${oneLine(options.messageId)}`,
    ...(reply.inReplyTo ? [`In-Reply-To: ${oneLine(reply.inReplyTo)}`] : []),
    ...(reply.references.length > 0 ? [`References: ${reply.references.map(oneLine).join(' ')}`] : []),
    `Date: ${(options.date ?? new Date()).toUTCString().replace('GMT', '+0000')}`,
    'MIME-Version: 1.0',
    'Content-Type: text/plain; charset=UTF-8',
    'Content-Transfer-Encoding: base64',
  ];
  const body = (
    Buffer.from(reply.content.replace(/\r?\n/gu, '\r\n'), 'utf8')
      .toString('base64')
      .match(/.{1,76}/gu) ?? []
  ).join('\r\n');
  return Buffer.from(`${headers.join('\r\n')}\r\n\r\n${body}\r\n`, 'utf8').toString('base64url');
}
