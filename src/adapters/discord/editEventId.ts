// Snowflakes are digits only, so nothing after this marker can be part of Discord's id.
const EDIT_MARK = '~edit-';

/**
 * The runtime message id of an edit that addresses an avatar anew: the Discord message id with
 * the edit's time, so the runtime takes it as a new message (its own id would be a duplicate).
 */
export function editEventId(messageId: string, editedAt: number): string {
  return `${messageId}${EDIT_MARK}${editedAt}`;
}

/** The Discord message id behind a runtime message id (an edit's id names the edited message). */
export function discordMessageIdOf(eventMessageId: string): string {
  const mark = eventMessageId.indexOf(EDIT_MARK);
  return mark < 0 ? eventMessageId : eventMessageId.slice(0, mark);
}
