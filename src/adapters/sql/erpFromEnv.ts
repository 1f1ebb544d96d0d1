import { ConfigError, type ConfigProblem } from '../../config/configError.js';
import type { Logger } from '../../logging/logger.js';
import { type Queryable, sqlErrorCode, sqlErrorText } from './sqlSupport.js';

type Env = Readonly<Record<string, string | undefined>>;

/** The environment variables that choose the ERP database the entity lookup reads, with docs. */
export const erpSettings = {
  ERP_DATABASE_URL: {
    default: 'unset (the embedded demo ERP)',
    doc: 'PostgreSQL connection string of the ERP database the entity lookup reads, e.g. postgres://reader@erp.internal/erp. Unset: an embedded, in-memory demo ERP (PGlite). Never logged.',
  },
  ERP_DATABASE_POOL_SIZE: {
    default: '4',
    doc: 'Most connections the lookup keeps open to ERP_DATABASE_URL (1 to 100).',
  },
  ERP_STATEMENT_TIMEOUT_MS: {
    default: '5000',
    doc: 'Longest one lookup statement may run, in milliseconds (100 to 600000); a timed-out lookup reports a retryable DATABASE_ERROR.',
  },
} as const;

/** The ERP database a lookup reads, and how to let it go. */
export interface ErpDatabase {
  /** `postgres` for ERP_DATABASE_URL, `demo` for the embedded demo ERP. */
  kind: 'postgres' | 'demo';
  db: Queryable;
  close(): Promise<void>;
}

/** Parsed ERP settings. */
export interface ErpConfig {
  url: string | undefined;
  poolSize: number;
  statementTimeoutMs: number;
}

function wholeNumber(
  env: Env,
  variable: keyof typeof erpSettings,
  fallback: number,
  min: number,
  max: number,
  problems: ConfigProblem[],
): number {
  const raw = env[variable]?.trim();
  if (!raw) return fallback;
  const n = /^\d+$/u.test(raw) ? Number(raw) : Number.NaN;
  if (Number.isInteger(n) && n >= min && n <= max) return n;
  problems.push({ variable, value: raw, expected: `a whole number from ${min} to ${max}` });
  return fallback;
}

/** Reads {@link erpSettings}. @throws ConfigError naming every bad variable (never echoing the URL). */
export function erpConfigFromEnv(env: Env): ErpConfig {
  const problems: ConfigProblem[] = [];
  const url = env.ERP_DATABASE_URL?.trim() || undefined;
  if (url !== undefined && !/^postgres(ql)?:\/\//iu.test(url))
    problems.push({
      variable: 'ERP_DATABASE_URL',
      value: '[redacted]',
      expected: 'a connection string starting with postgres:// or postgresql://',
    });
  const poolSize = wholeNumber(env, 'ERP_DATABASE_POOL_SIZE', 4, 1, 100, problems);
  const statementTimeoutMs = wholeNumber(env, 'ERP_STATEMENT_TIMEOUT_MS', 5000, 100, 600_000, problems);
  if (problems.length > 0) throw new ConfigError(problems);
  return { url, poolSize, statementTimeoutMs };
}

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
  return { kind: 'postgres', db: pool, close: () => pool.end() };
}

async function openDemo(): Promise<ErpDatabase> {
  // Loaded on demand: a real ERP never loads PGlite.
  const { createDemoErp } = await import('./demoErp.js');
  const db = await createDemoErp();
  return { kind: 'demo', db, close: () => db.close() };
}

/**
 * Opens the ERP database the environment names: a `pg` Pool for `ERP_DATABASE_URL` (connections
 * are made on the first query), or the embedded demo ERP when it is unset.
 * @throws ConfigError for bad settings.
 */
export async function erpDatabaseFromEnv(
  env: Env,
  options: { logger?: Logger; openers?: Partial<ErpOpeners> } = {},
): Promise<ErpDatabase> {
  const config = erpConfigFromEnv(env);
  const openers: ErpOpeners = { postgres: openPostgres, demo: openDemo, ...options.openers };
  if (config.url === undefined) {
    options.logger?.info({ erp: 'demo' }, 'ERP database: embedded demo ERP (ERP_DATABASE_URL is unset)');
    return openers.demo();
  }
  options.logger?.info({ erp: 'postgres', poolSize: config.poolSize }, 'ERP database: PostgreSQL');
  return openers.postgres({ ...config, url: config.url }, options.logger);
}
