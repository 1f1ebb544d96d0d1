import { z } from 'zod';
import { count } from '../../config/settingSchemas.js';
import { defineSettings, type EnvRecord, settingsFromEnv } from '../../config/settings.js';
import type { Logger } from '../../logging/logger.js';
import { transactional } from './asRole.js';
import { type Queryable, sqlErrorCode, sqlErrorText } from './sqlSupport.js';

/** The environment variables that choose the ERP database the entity lookup reads, with docs. */
export const erpSettings = defineSettings({
  ERP_DATABASE_URL: {
    key: 'url',
    schema: z
      .string()
      .regex(/^postgres(ql)?:\/\//iu, 'a connection string starting with postgres:// or postgresql://'),
    secret: true,
    shown: 'unset (the embedded demo ERP)',
    doc: 'PostgreSQL connection string of the ERP database the entity lookup reads, e.g. postgres://reader@erp.internal/erp. Unset: an embedded, in-memory demo ERP (PGlite). Never logged.',
  },
  ERP_DATABASE_POOL_SIZE: {
    key: 'poolSize',
    schema: count(1, 100),
    default: 4,
    doc: 'Most connections the lookup keeps open to ERP_DATABASE_URL (1 to 100).',
  },
  ERP_STATEMENT_TIMEOUT_MS: {
    key: 'statementTimeoutMs',
    schema: count(100, 600_000),
    default: 5000,
    doc: 'Longest one lookup statement may run, in milliseconds (100 to 600000); a timed-out lookup reports a retryable DATABASE_ERROR.',
  },
});

/** The ERP database a lookup reads, and how to let it go. */
export interface ErpDatabase {
  /** `postgres` for ERP_DATABASE_URL, `demo` for the embedded demo ERP. */
  kind: 'postgres' | 'demo';
  db: Queryable;
  /**
   * The database as the agent uses it: each statement in its own transaction, under the agent's
   * role where the database has one (the demo ERP's `erp_agent`). Default: `db`.
   */
  agent?: Queryable;
  close(): Promise<void>;
}

/** Parsed ERP settings. */
export interface ErpConfig {
  url: string | undefined;
  poolSize: number;
  statementTimeoutMs: number;
}

/** Reads {@link erpSettings}. @throws ConfigError naming every bad variable (never echoing the URL). */
export function erpFromEnv(env: EnvRecord): ErpConfig {
  return settingsFromEnv(erpSettings, env);
}

/** The name {@link erpFromEnv} had first. */
export const erpConfigFromEnv = erpFromEnv;

/** How each kind of ERP database is opened; tests replace them. */
export interface ErpOpeners {
  postgres: (config: ErpConfig & { url: string }, logger: Logger | undefined) => Promise<ErpDatabase>;
  demo: () => Promise<ErpDatabase>;
}

async function openPostgres(
  config: ErpConfig & { url: string },
  logger: Logger | undefined,
): Promise<ErpDatabase> {
  // Loaded on demand: the demo ERP never loads the driver.
  const { default: pg } = await import('pg');
  const pool = new pg.Pool({
    connectionString: config.url,
    max: config.poolSize,
    statement_timeout: config.statementTimeoutMs,
    connectionTimeoutMillis: config.statementTimeoutMs,
    application_name: 'troupe-entity-lookup',
  });
  // An idle connection that breaks must not crash the process; the next query reports it.
  pool.on('error', (error) => {
    logger?.warn(
      { sqlstate: sqlErrorCode(error), error: sqlErrorText(error) },
      'ERP database: idle connection error',
    );
  });
  // The connection's own user is the agent's role.
  return { kind: 'postgres', db: pool, agent: transactional(pool), close: () => pool.end() };
}

async function openDemo(): Promise<ErpDatabase> {
  // Loaded on demand: a real ERP never loads PGlite.
  const { createDemoErp, demoErpAgentRole } = await import('./demoErp.js');
  const db = await createDemoErp();
  return { kind: 'demo', db, agent: transactional(db, demoErpAgentRole), close: () => db.close() };
}

/**
 * Opens the ERP database the environment names: a `pg` Pool for `ERP_DATABASE_URL` (connections
 * are made on the first query), or the embedded demo ERP when it is unset.
 * @throws ConfigError for bad settings.
 */
export async function erpDatabaseFromEnv(
  env: EnvRecord,
  options: { logger?: Logger; openers?: Partial<ErpOpeners> } = {},
): Promise<ErpDatabase> {
  const config = erpFromEnv(env);
  const openers: ErpOpeners = { postgres: openPostgres, demo: openDemo, ...options.openers };
  if (config.url === undefined) {
    options.logger?.info({ erp: 'demo' }, 'ERP database: embedded demo ERP (ERP_DATABASE_URL is unset)');
    return openers.demo();
  }
  options.logger?.info({ erp: 'postgres', poolSize: config.poolSize }, 'ERP database: PostgreSQL');
  return openers.postgres({ ...config, url: config.url }, options.logger);
}
