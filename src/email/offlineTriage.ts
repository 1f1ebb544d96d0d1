import type { Email } from './emailInput.js';
import { isSender, namedSenders, senderAddress, withoutSenders } from './senderScope.js';
import type { TriageClassification, TriageDecision } from './triageDecision.js';

/** One line of the preferences: the kind of email it describes and the words that find it. */
interface PreferenceLine {
  classification: TriageClassification;
  text: string;
  /** Each distinctive word's stem, and the word as written (for the reasoning). */
  words: { stem: string; word: string }[];
  /**
   * Senders the line names (a learned "emails like … from a@b", or a domain "@b"): the line
   * applies to email from them only.
   */
  senders: string[];
}

// Words that say nothing about a kind of email.
const STOP = new Set(
  'the and for from with that this need needs nothing about without worth know have your their they them what when where which while into onto over under more less than some such each other others made make made only ever just also email emails like user said'.split(
    ' ',
  ),
);
const STEM = 5;
const stem = (word: string) => word.slice(0, STEM);
const wordsOf = (text: string) =>
  text
    .normalize('NFKC')
    .toLocaleLowerCase('en')
    .match(/\p{L}[\p{L}\p{N}'-]*/gu) ?? [];

/**
 * Reads the preference instructions: a line starting with `Ignore`, `Notify` or `Respond` opens a
 * section, and each `- ` line under it is one kind of email. Words of four letters or more (not
 * filler) are compared by their first five letters, so "meetings" finds "meeting". A line that
 * names a sender (`a@b.example`, or `@b.example` for a domain) matches that sender's email only.
 */
export function preferenceLines(instructions: string): PreferenceLine[] {
  const lines: PreferenceLine[] = [];
  let section: TriageClassification | undefined;
  for (const raw of instructions.split('\n')) {
    const line = raw.trim();
    const heading = /^(ignore|notify|respond)\b/iu.exec(line);
    if (heading) {
      section = (heading[1] as string).toLowerCase() as TriageClassification;
      continue;
    }
    if (!section || !/^[-*•]\s+/u.test(line)) continue;
    const text = line.replace(/^[-*•]\s+/u, '');
    const senders = namedSenders(text);
    const words = new Map<string, string>();
    for (const w of wordsOf(withoutSenders(text)))
      if (w.length >= 4 && !STOP.has(w) && !words.has(stem(w))) words.set(stem(w), w);
    if (words.size > 0 || senders.length > 0)
      lines.push({
        classification: section,
        text,
        words: [...words].map(([s, word]) => ({ stem: s, word })),
        senders,
      });
  }
  return lines;
}

/**
 * The offline router: classifies an email from the same preferences a model would read, with no
 * model. Each preference line scores by how many of its words the email has (a word in the
 * subject counts twice); the best line's section decides, and the reasoning names it. A direct
 * question with nothing else matched is `respond`; nothing at all is `notify`, so a person sees it.
 * Deterministic: the same email and preferences always give the same decision.
 */
export function offlineTriage(email: Email, instructions: string): TriageDecision {
  const subject = new Set(wordsOf(email.subject).map(stem));
  const sender = senderAddress(email.from);
  const body = new Set(wordsOf(`${email.body.slice(0, 20_000)}`).map(stem));
  let best: { line: PreferenceLine; score: number; hits: string[] } | undefined;
  for (const line of preferenceLines(instructions)) {
    let score = 0;
    const hits: string[] = [];
    for (const { stem: s, word } of line.words) {
      if (subject.has(s)) {
        score += 2;
        hits.push(word);
      } else if (body.has(s)) {
        score += 1;
        hits.push(word);
      }
    }
    if (line.senders.length > 0) {
      // A line naming a sender is about that sender's email only: a subject copied by anyone
      // else does not match it. With a topic, the sender counts only with the topic too.
      const from = line.senders.find((named) => isSender(sender, named));
      if (!from || (line.words.length > 0 && hits.length === 0)) continue;
      score += 2;
      hits.push(from);
    }
    // Ties go to the line that asks more of a person (respond, then notify), so nothing is missed.
    if (score > 0 && (!best || score > best.score || (score === best.score && rank(line) > rank(best.line))))
      best = { line, score, hits };
  }
  if (best) {
    return {
      classification: best.line.classification,
      reasoning: `Matches “${best.line.text}” under ${title(best.line.classification)} (${best.hits.map((h) => `“${h}”`).join(', ')}).`,
      decidedBy: 'offline',
    };
  }
  if (/\?/u.test(email.body) || /\?/u.test(email.subject)) {
    return {
      classification: 'respond',
      reasoning: 'No preference matches, and the email asks a question: respond.',
      decidedBy: 'offline',
    };
  }
  return {
    classification: 'notify',
    reasoning: 'No preference matches: notify, so a person decides.',
    decidedBy: 'offline',
  };
}

const rank = (line: PreferenceLine) => ({ ignore: 0, notify: 1, respond: 2 })[line.classification];
const title = (c: TriageClassification) => `${c[0]?.toUpperCase()}${c.slice(1)}`;
