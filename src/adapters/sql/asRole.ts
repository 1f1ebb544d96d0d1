import { type Queryable, quoteIdent } from './sqlSupport.js';

/** A database that runs a callback inside one transaction (PGlite). */
export interface TransactionRunner {
  transaction<T>(callback: (tx: Queryable) => Promise<T>): Promise<T>;
}

/** A database that lends out one connection at a time (a `pg` Pool). */
export interface ConnectionPool {
  connect(): Promise<Queryable & { release(error?: Error | boolean): void }>;
}

/**
 * A {@link Queryable} that runs every statement as `role`: each query gets its own transaction
 * with `SET LOCAL ROLE`, so the role never leaks to other users of the same database or pool.
 * Used to run lookups with a read-only role (the demo ERP's `erp_reader`).
 */
export function asRole(db: TransactionRunner | ConnectionPool, role: string): Queryable {
  return transactional(db, role);
}

/**
 * A {@link Queryable} that runs every statement in its own transaction, as `role` when one is
 * given (`SET LOCAL ROLE`). Writes go through it, so a failed statement leaves nothing behind.
 */
export function transactional(db: TransactionRunner | ConnectionPool, role?: string): Queryable {
  const setRole = role === undefined ? undefined : `set local role ${quoteIdent(role)}`;
  if ('transaction' in db)
    return {
      query: (text, params) =>
        db.transaction(async (tx) => {
          if (setRole) await tx.query(setRole, []);
          return tx.query(text, params);
        }),
    };
  return {
    async query(text, params) {
      const client = await db.connect();
      try {
        await client.query('begin', []);
        if (setRole) await client.query(setRole, []);
        const result = await client.query(text, params);
        await client.query('commit', []);
        client.release();
        return result;
      } catch (error) {
        // A failed rollback means the connection is broken: drop it rather than reuse it.
        const rolledBack = await client.query('rollback', []).then(
          () => true,
          () => false,
        );
        client.release(rolledBack ? undefined : true);
        throw error;
      }
    },
  };
}
