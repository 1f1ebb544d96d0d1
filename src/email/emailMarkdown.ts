import type { Email } from './emailInput.js';

/**
 * An email as Markdown for the inbox and the response agent: subject, sender, recipients, thread
 * and id, then the text. The text is the email's own; prompts that carry it frame it as
 * untrusted data (see `untrustedEmail`).
 */
export function emailMarkdown(email: Email): string {
  return `${emailHeading(email)}\n\n${escapedText(email.body.trim())}\n\n---`;
}

/**
 * The start of {@link emailMarkdown}: the subject as a heading and the header lines (each on one
 * line), without the text. An answered interrupt shows this much.
 */
export function emailHeading(email: Email): string {
  const lines = [
    `## Email: ${oneLine(email.subject) || '(no subject)'}`,
    '',
    `**From**: ${oneLine(email.from)}`,
    `**To**: ${oneLine(email.to)}`,
  ];
  if (email.cc) lines.push(`**Cc**: ${oneLine(email.cc)}`);
  if (email.date) lines.push(`**Date**: ${oneLine(email.date)}`);
  if (email.threadId) lines.push(`**Thread**: ${oneLine(email.threadId)}`);
  lines.push(`**ID**: ${oneLine(email.id)}`);
  return lines.join('\n');
}

/**
 * Text with its structure-making lines escaped (`\# …`, `\---`), so an email (or a draft that
 * quotes one) cannot end its own section and fake what follows it (a "Proposed" block under a
 * heading of its own). `fromLine`: lines before it are left as they are (a value that starts after
 * a label on the same line).
 */
export function escapedText(body: string, { fromLine = 0 }: { fromLine?: number } = {}): string {
  return body
    .split('\n')
    .map((line, i) =>
      i >= fromLine && /^\s*(#|-{3,}\s*$|\*{3,}\s*$|_{3,}\s*$|\\)/u.test(line) ? `\\${line}` : line,
    )
    .join('\n');
}

/** Header values stay on one line, whatever the input held. */
function oneLine(value: string): string {
  return value.replace(/\s+/gu, ' ').trim();
}
