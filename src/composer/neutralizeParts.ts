/**
 * Every text in a reply's parts that a reader sees, with mentions neutralised: values, column
 * headers, choice labels and the user's own words quoted back all come from outside (a tool, a
 * database, the user), so none of them may ping a channel. `table.keys` stay as the rows have
 * them, since they are identifiers for code, not text for people.
 */
import { neutralizeMentions } from '../delivery/neutralizeMentions.js';
import type { ReplyParts } from './composedReply.js';

const safe = neutralizeMentions;
const safeList = (items: readonly string[] | undefined) => items?.map(safe);

/** `parts` with every reader-facing string neutralised (a new object; `parts` is not changed). */
export function neutralizeParts(parts: ReplyParts): ReplyParts {
  const out: ReplyParts = { ...parts, summary: safe(parts.summary) };
  if (parts.table)
    out.table = {
      ...parts.table,
      columns: parts.table.columns.map(safe),
      rows: parts.table.rows.map((row) => row.map(safe)),
    };
  if (parts.choices)
    out.choices = parts.choices.map((c) => ({ ...c, label: safe(c.label), context: safe(c.context) }));
  if (parts.prompt !== undefined) out.prompt = safe(parts.prompt);
  const whatITried = safeList(parts.whatITried);
  if (whatITried) out.whatITried = whatITried;
  const nextSteps = safeList(parts.nextSteps);
  if (nextSteps) out.nextSteps = nextSteps;
  return out;
}
