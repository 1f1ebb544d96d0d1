/** ANSI dim, only when colour is on. */
export const dimmer = (color: boolean) => (text: string) => (color ? `\u001b[2m${text}\u001b[22m` : text);
/** ANSI bold, only when colour is on. */
export const bolder = (color: boolean) => (text: string) => (color ? `\u001b[1m${text}\u001b[22m` : text);

/** The short thread id people read: `th1` for `terminal:lobby:th1`. */
export function shortThreadId(threadId: string): string {
  return threadId.slice(threadId.lastIndexOf(':') + 1);
}
