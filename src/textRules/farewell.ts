// Whole phrases only, and each phrase guarded against its everyday uses: "see you" needs a "later"
// or a full stop of the sentence ("Nice to see you, Luna!" is a greeting), "so long" is not
// "so long as", "take care" is not "take care of", "got to go" must end the clause.
const WORD_CHAR = '[\\p{L}\\p{N}_-]';
const END = '(?=\\s*(?:[.!?…,;:)]|$|\\s+(?:now|all|everyone|folks|guys|friends|for\\s+now)\\b))';
const FAREWELL = new RegExp(
  [
    `good\\s*bye(?!${WORD_CHAR})`,
    `bye(?:[\\s-]*bye)?(?!${WORD_CHAR})`,
    `farewell(?!${WORD_CHAR})`,
    `see\\s+(?:you|ya)\\s+(?:later|soon|around|tomorrow|next\\s+time|then)(?!${WORD_CHAR})`,
    `see\\s+ya${END}`,
    `(?:gotta|got\\s+to|have\\s+to|need\\s+to)\\s+(?:go|run)${END}`,
    `take\\s+care(?!\\s+of)(?!${WORD_CHAR})`,
    `good\\s*night(?!${WORD_CHAR})`,
    `signing\\s+off(?!${WORD_CHAR})`,
    `until\\s+next\\s+time(?!${WORD_CHAR})`,
    `catch\\s+you\\s+later(?!${WORD_CHAR})`,
    `so\\s+long${END}`,
  ]
    .map((p) => `(?<!${WORD_CHAR})${p}`)
    .join('|'),
  'iu',
);

/** True when a message takes leave of the conversation ("goodbye", "see you later", "gotta go", ...). */
export function isFarewell(text: string): boolean {
  return FAREWELL.test(text);
}
