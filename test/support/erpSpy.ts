import { Writable } from 'node:stream';
import { pino } from 'pino';
import type { Queryable } from '../../src/adapters/sql/sqlSupport.js';
import type { Logger } from '../../src/logging/logger.js';

/** One statement a spied database ran, and the SQLSTATE it failed with, if it failed. */
export interface SpiedStatement {
  text: string;
  params: unknown[];
  failedWith: string | undefined;
}

/** Wraps a database, recording every statement and failure code. */
export function spyOn(db: Queryable): Queryable & { statements: SpiedStatement[] } {
  const statements: SpiedStatement[] = [];
  return {
    statements,
    async query(text, params) {
      const entry: SpiedStatement = { text, params: params ?? [], failedWith: undefined };
      statements.push(entry);
      try {
        return await db.query(text, params);
      } catch (error) {
        entry.failedWith = (error as { code?: string }).code ?? 'unknown';
        throw error;
      }
    },
  };
}

/** A pino logger that keeps every line it writes (parsed), for assertions on what was logged. */
export function capturingLogger(): { logger: Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n'))
        if (line.trim()) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { logger: pino({ level: 'debug' }, sink), lines };
}
