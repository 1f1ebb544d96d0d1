/** An attachment of a response, as much of it as a note about it needs. */
export interface NotedAttachment {
  /** The file's name, as the avatar gave it. */
  name: string;
  /** Its media type. */
  mediaType: string;
  /** A link to it, when it has one. */
  url?: string | undefined;
}

/**
 * The lines that stand in for files a transport cannot carry, so a person learns a file exists
 * (and can open it, when it has a link) instead of the file vanishing without a word.
 *
 * @example
 * unsentFileNotes([{ name: 'q3.csv', mediaType: 'text/csv' }])
 * // ['[file not shown here: q3.csv (text/csv)]']
 */
export function unsentFileNotes(attachments: readonly NotedAttachment[]): string[] {
  return attachments.map((a) => {
    const name = oneLine(a.name) || 'unnamed file';
    return a.url !== undefined
      ? `[file: ${name}: ${a.url}]`
      : `[file not shown here: ${name} (${oneLine(a.mediaType)})]`;
  });
}

/** A name on one line: a file name must not be able to start lines of its own in the reply. */
function oneLine(value: string): string {
  return value.replace(/[\r\n\t\u2028\u2029]+/g, ' ').trim();
}

/** The response's text with the notes for files the transport cannot carry appended on lines of their own. */
export function textWithUnsentFiles(
  text: string | undefined,
  attachments: readonly NotedAttachment[],
): string | undefined {
  if (attachments.length === 0) return text;
  const notes = unsentFileNotes(attachments).join('\n');
  return text !== undefined && text.length > 0 ? `${text}\n${notes}` : notes;
}
