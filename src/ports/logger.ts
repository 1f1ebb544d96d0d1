/**
 * One logging method, with pino's call shape: fields first, then the message (`logger.info({ channel },
 * 'channel loaded')`), or a message alone.
 */
export interface LogMethod {
  (fields: object, message?: string): void;
  (message: string): void;
}

/**
 * The logger port: all Troupe asks of a logger. A pino logger is one as it is (Troupe's default is
 * pino, see `createLogger`); any other logging library fits behind a few lines of adapter. Troupe
 * logs no secrets, but only its own pino logger also redacts keys and URL credentials a caller's
 * fields might carry.
 *
 * @example
 * ```ts
 * const lines: string[] = [];
 * const logger: Logger = {
 *   debug: () => {},
 *   info: (fields, message) => lines.push(`info ${message ?? fields}`),
 *   warn: (fields, message) => lines.push(`warn ${message ?? fields}`),
 *   error: (fields, message) => lines.push(`error ${message ?? fields}`),
 *   child: () => logger,
 * };
 * const runtime = createRuntime({ avatars, logger });
 * ```
 */
export interface Logger {
  debug: LogMethod;
  info: LogMethod;
  warn: LogMethod;
  error: LogMethod;
  /** The most detailed level, when the logger has one (pino does): lines it would drop at `debug`. */
  trace?: LogMethod;
  /** A logger that adds `bindings` to every line it writes (e.g. `{ actor: 'routing' }`). */
  child(bindings: Record<string, unknown>): Logger;
}
