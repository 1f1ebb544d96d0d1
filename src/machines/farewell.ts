// Whole phrases only: "later" or "go" alone appear in ordinary sentences and must not end a thread.
const FAREWELL =
  /(?<![\p{L}\p{N}_])(good\s*bye|bye(?:\s*bye)?|farewell|see\s+(?:you|ya)|gotta\s+go|got\s+to\s+go|take\s+care|good\s*night|signing\s+off|until\s+next\s+time|catch\s+you\s+later|so\s+long)(?![\p{L}\p{N}_])/iu;

/** True when a message takes leave of the conversation ("goodbye", "see you", "gotta go", ...). */
export function isFarewell(text: string): boolean {
  return FAREWELL.test(text);
}
