import { createInterface } from 'node:readline';

/** The person's side of a chat: lines typed in, lines printed out, and the prompt between. */
export interface ChatTerminal {
  /** Whether both ends are terminals: then input has line editing and a prompt. */
  readonly interactive: boolean;
  /** Prints one line; while the person is typing, above the prompt, which is then redrawn. */
  out(line: string): void;
  /** Shows the prompt (when interactive) and waits for the next line; `undefined` when input ends. */
  nextLine(): Promise<string | undefined>;
  /** Erases the line just typed, which the chat prints again with its number (when interactive). */
  eraseTypedLine(): void;
  /** Erases the prompt left behind by Ctrl+D (when interactive). */
  erasePrompt(): void;
  /** Ctrl+C ends the input, as Ctrl+D does. */
  closeOnInterrupt(): void;
  close(): void;
}

/**
 * Reads lines from `input` with `readline`: with line editing and a dim `> ` prompt when `isTTY`
 * and `input` is a terminal, plain lines otherwise.
 */
export function createChatTerminal(options: {
  input: NodeJS.ReadableStream;
  isTTY: boolean;
  stdout: (text: string) => void;
  dim: (text: string) => string;
}): ChatTerminal {
  const { input, stdout } = options;
  const interactive = options.isTTY && (input as { isTTY?: boolean }).isTTY === true;
  const rl = createInterface({
    input,
    ...(interactive ? { output: process.stdout, terminal: true } : { terminal: false }),
    crlfDelay: Number.POSITIVE_INFINITY,
  });
  rl.setPrompt(options.dim('> '));
  // Lines typed while an answer is still on its way wait in the iterator's buffer.
  const lines = rl[Symbol.asyncIterator]();
  let prompting = false;
  return {
    interactive,
    out(line) {
      // An avatar speaking while the person types (a follow-up): print above the prompt, then redraw it.
      if (interactive && prompting) {
        stdout(`\r\u001b[2K${line}\n`);
        rl.prompt(true);
      } else {
        stdout(`${line}\n`);
      }
    },
    async nextLine() {
      if (interactive) {
        prompting = true;
        rl.prompt();
      }
      const next = await lines.next();
      prompting = false;
      return next.done ? undefined : next.value;
    },
    eraseTypedLine() {
      if (interactive) stdout('\u001b[1A\u001b[2K');
    },
    erasePrompt() {
      if (interactive) stdout('\r\u001b[2K');
    },
    closeOnInterrupt() {
      rl.on('SIGINT', () => rl.close());
    },
    close() {
      prompting = false;
      rl.close();
    },
  };
}
