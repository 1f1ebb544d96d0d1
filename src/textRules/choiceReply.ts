/** One option a person was offered (a disambiguation candidate). */
export interface OfferedChoice {
  id: string | number;
  label: string;
}

const ORDINALS: Record<string, number> = {
  first: 1,
  second: 2,
  third: 3,
  fourth: 4,
  fifth: 5,
  sixth: 6,
  seventh: 7,
  eighth: 8,
  ninth: 9,
  tenth: 10,
  '1st': 1,
  '2nd': 2,
  '3rd': 3,
  '4th': 4,
  '5th': 5,
  '6th': 6,
  '7th': 7,
  '8th': 8,
  '9th': 9,
  '10th': 10,
  one: 1,
  two: 2,
  three: 3,
  four: 4,
  five: 5,
  six: 6,
  seven: 7,
  eight: 8,
  nine: 9,
  ten: 10,
  last: -1,
};

const normalise = (text: string) =>
  text
    .normalize('NFKC')
    .toLocaleLowerCase('en')
    .replace(/[“”"'’.!?,;:()]/gu, ' ')
    .replace(/\s+/gu, ' ')
    .trim();

/**
 * Which offered choice a reply picks, if any: a number ("2", "#2", "option 2"), an ordinal ("the
 * second one", "2nd", "the last one"), or the exact label (case- and punctuation-insensitive).
 * Anything else picks nothing: a new question must not be mistaken for a choice.
 */
export function resolveChoiceReply(
  text: string,
  choices: readonly OfferedChoice[],
): OfferedChoice | undefined {
  const reply = normalise(text);
  if (reply === '' || choices.length === 0) return undefined;
  const exact = choices.find((c) => normalise(c.label) === reply);
  if (exact) return exact;
  const byIndex = (n: number) =>
    n === -1 ? choices[choices.length - 1] : n >= 1 ? choices[n - 1] : undefined;
  // "2", "#2", "no. 2", "option 2", "number 2", "pick 2", "2 please"
  const numeric =
    /^(?:(?:option|number|no|pick|choice|#)\s*)?#?(\d{1,2})(?:\s*(?:please|pls|thanks))?$/u.exec(reply);
  if (numeric) return byIndex(Number(numeric[1]));
  // "the second one", "second", "the 2nd", "the last one", "second please"
  const ordinal = /^(?:the\s+)?(\w+)(?:\s+(?:one|option|choice))?(?:\s*(?:please|pls|thanks))?$/u.exec(reply);
  if (ordinal?.[1] && ORDINALS[ordinal[1]] !== undefined) return byIndex(ORDINALS[ordinal[1]] as number);
  return undefined;
}
