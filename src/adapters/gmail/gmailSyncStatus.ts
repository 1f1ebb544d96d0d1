import { z } from 'zod';
import type { DocumentStore } from '../../ports/store.js';
import { describe, TroupeError } from '../../ports/troupeError.js';

const COLLECTION = 'gmail-sync-status';
/** One document per store: the CLI runs one Gmail account on a store at a time. */
const KEY = 'status';

const passSchema = z.object({
  mode: z.enum(['full', 'history', 'resync']),
  handed: z.number().int().nonnegative(),
  skipped: z.number().int().nonnegative(),
  historyId: z.string(),
});

const errorSchema = z.object({ code: z.string(), message: z.string(), at: z.number() });

const statusSchema = z.object({
  /** The account's address, when it was known (it is not when the credentials were refused at once). */
  address: z.string().optional(),
  /** When the last pass over the mailbox finished (the adapter's clock, epoch ms). */
  lastSuccessAt: z.number().optional(),
  lastPass: passSchema.optional(),
  /** When Gmail last answered 404 for the cursor and the inbox was read again. */
  lastResyncAt: z.number().optional(),
  /** The last failure of a pass, or of connecting, whether or not a later pass went through. */
  lastError: errorSchema.optional(),
});

/** How the Gmail sync went, as the store keeps it for `troupe email --status`. */
export type GmailSyncStatus = z.infer<typeof statusSchema>;

/** One finished pass, as {@link recordSyncSuccess} keeps it. */
export type GmailPassSummary = z.infer<typeof passSchema>;

/** The sync status in `documents`, `undefined` before the first pass (or when unreadable). */
export async function readSyncStatus(documents: DocumentStore): Promise<GmailSyncStatus | undefined> {
  const stored = await documents.get(COLLECTION, KEY);
  if (!stored) return undefined;
  const parsed = statusSchema.safeParse(stored.value);
  return parsed.success ? parsed.data : undefined;
}

async function update(
  documents: DocumentStore,
  at: number,
  change: (status: GmailSyncStatus) => GmailSyncStatus,
): Promise<void> {
  const current = (await readSyncStatus(documents)) ?? {};
  await documents.put(COLLECTION, KEY, statusSchema.parse(change(current)), { at });
}

/** Records a pass that went through (its time, what it did). */
export function recordSyncSuccess(
  documents: DocumentStore,
  address: string,
  pass: GmailPassSummary,
  at: number,
): Promise<void> {
  return update(documents, at, (status) => ({
    // Another account's status is not this one's.
    ...(status.address === undefined || status.address === address ? status : {}),
    address,
    lastSuccessAt: at,
    lastPass: { mode: pass.mode, handed: pass.handed, skipped: pass.skipped, historyId: pass.historyId },
    ...(pass.mode === 'resync' ? { lastResyncAt: at } : {}),
  }));
}

/**
 * Records a failure (of a pass, or of connecting when `address` is not known yet) with its code
 * and message: a `TroupeError`'s, else `TROUPE_GMAIL_FAILED` with a plain description.
 */
export function recordSyncFailure(
  documents: DocumentStore,
  address: string | undefined,
  error: unknown,
  at: number,
): Promise<void> {
  const code = TroupeError.isInstance(error) ? error.code : 'TROUPE_GMAIL_FAILED';
  const message = (TroupeError.isInstance(error) ? error.message : describe(error)).slice(0, 1000);
  return update(documents, at, (status) => ({
    ...status,
    ...(address ? { address } : {}),
    lastError: { code, message, at },
  }));
}
