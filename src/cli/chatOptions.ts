import type { CoordinationConfig } from '../config/coordinationConfig.js';

/** What `troupe chat` needs from the command line and its surroundings. */
export interface ChatOptions {
  /** The avatars file to read. */
  avatarsFile: string;
  /** How to show the file in the banner (the path as typed, or relative to the working directory). */
  avatarsLabel?: string;
  /** The person's display name. */
  name: string;
  /** The channel id; the channel is `terminal:<channel>`. */
  channel: string;
  /** Coordination settings (from the environment). */
  config: CoordinationConfig;
  /** Lines are read from here. */
  input: NodeJS.ReadableStream;
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  env: Readonly<Record<string, string | undefined>>;
  /** Whether stdout is a terminal: with a terminal on stdin too, input gets line editing and a prompt. */
  isTTY: boolean;
  /** ANSI dim and bold. */
  color: boolean;
  /** Also print claims, suppressed candidates, and how many messages each turn saw. */
  verbose?: boolean;
  /** Serve the studio on this runtime (127.0.0.1, any free port, a fresh token; the URL printed). */
  studio?: boolean;
  /** With `studio`: the page may post into the channel, summon and dismiss (else it only watches). */
  playground?: boolean;
}
