/**
 * Renders reply parts as one plain-text, markdown-light message: sections separated by a blank
 * line, "- " bullets, numbered options, and a table preview of several rows as aligned columns in
 * a ``` code block (monospace in chat apps, still aligned as plain text). A single record is shown
 * as "- Label: value" lines instead, which read better than a one-row table.
 */
import type { ReplyParts, ReplyTable } from './composedReply.js';
import { renderTableLines } from './tablePreview.js';

function tableSection(table: ReplyTable): string {
  if (table.total === 1 && table.shown === 1) {
    const row = table.rows[0] ?? [];
    return table.columns.map((column, i) => `- ${column}: ${row[i] ?? ''}`).join('\n');
  }
  const grid = ['```', ...renderTableLines(table), '```'].join('\n');
  return table.shown < table.total
    ? `${grid}\nShowing ${table.shown} of ${table.total.toLocaleString('en-US')}.`
    : grid;
}

function choicesSection(parts: ReplyParts): string | undefined {
  const choices = parts.choices ?? [];
  if (choices.length === 0) return undefined;
  const lines = choices.map((c) => `${c.number}. ${c.label}${c.context === '' ? '' : ` — ${c.context}`}`);
  const total = parts.choicesTotal ?? choices.length;
  if (total > choices.length)
    lines.push(
      `(${(total - choices.length).toLocaleString('en-US')} more not shown; if yours isn't listed, give me a longer or more specific name.)`,
    );
  return lines.join('\n');
}

const bullets = (heading: string, items: readonly string[] | undefined) =>
  items && items.length > 0 ? [heading, ...items.map((item) => `- ${item}`)].join('\n') : undefined;

/** The full text of a reply: summary, table or choices, prompt, next steps, then "What I tried". */
export function renderText(parts: ReplyParts): string {
  return [
    parts.summary,
    parts.table ? tableSection(parts.table) : undefined,
    choicesSection(parts),
    parts.prompt,
    bullets('Next steps:', parts.nextSteps),
    bullets('What I tried:', parts.whatITried),
  ]
    .filter((section): section is string => section !== undefined && section !== '')
    .join('\n\n');
}
