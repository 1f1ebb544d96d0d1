import { readFile } from 'node:fs/promises';
import type { EmailAssistant } from '../actors/email/emailAssistant.js';
import type { EmailRecord, InboxItem } from '../actors/email/emailRecord.js';
import { openDefaultStore, type StoreOpeners } from '../adapters/store/storeFromEnv.js';
import { terminalText } from '../delivery/terminalText.js';
import { parseEmail } from '../email/emailInput.js';
import { allowedAnswers } from '../email/inboxItemJson.js';
import { stateValueText } from '../inspect/stateValueText.js';
import type { Logger } from '../logging/logger.js';
import { createLogger } from '../logging/logger.js';
import { logLevelFromEnv } from '../logging/logLevel.js';
import type { TroupeStore } from '../ports/store.js';
import { describe, isTroupeError, TroupeError } from '../ports/troupeError.js';
import { serveEmailStudio } from './emailStudio.js';
import { fail } from './fail.js';
import { inboxItemJson, jsonText } from './inboxJson.js';
import { type OpenedEmailAssistant, openEmailAssistant } from './openEmailAssistant.js';
import { exitCodeOf, reportStoreFailure } from './storeErrors.js';

/** What the email commands need. */
export interface EmailCommandOptions {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  env: Readonly<Record<string, string | undefined>>;
  /** How the store the environment names is opened (default: the real openers; tests wrap them). */
  storeOpeners?: Partial<StoreOpeners>;
}

interface Opened extends OpenedEmailAssistant {
  store: TroupeStore;
  logger: Logger;
}

const ALLOWED = (item: InboxItem) => allowedAnswers(item.request.config);

/**
 * The assistant on the default store and the model of the environment, with Gmail and Google
 * Calendar when Google credentials are set, else the local mailbox and calendar.
 */
async function open(options: EmailCommandOptions): Promise<Opened | number> {
  let logger: Logger;
  let store: TroupeStore;
  try {
    logger = createLogger({ level: logLevelFromEnv(options.env, 'warn') });
    store = await openDefaultStore(options.env, {
      logger,
      ...(options.storeOpeners ? { openers: options.storeOpeners } : {}),
    });
  } catch (error) {
    if (isTroupeError(error)) return fail(options.stderr, error.code, error.message, exitCodeOf(error));
    throw error;
  }
  try {
    return { store, logger, ...(await openEmailAssistant(options.env, store, logger)) };
  } catch (error) {
    await store.close();
    if (!isTroupeError(error)) throw error;
    return fail(options.stderr, error.code, error.message, exitCodeOf(error));
  }
}

/**
 * `troupe email [--mailbox file.jsonl] [--watch]`: runs the assistant on Gmail when Google
 * credentials are set (one poll pass; with `--watch`, a pass every TROUPE_GMAIL_POLL_SECONDS until
 * the stop signal), else on a mailbox file (one email per line, any input shape; default: the
 * sample mailbox that ships with Troupe), and prints each triage decision with its reasoning,
 * what it did, and what waits for the human. State is kept in the store, so a second run
 * processes only new emails.
 */
export async function runEmail(
  options: EmailCommandOptions & {
    mailboxFile: string;
    /** Whether `--mailbox` was given (a file is then read even with Gmail credentials refused). */
    mailboxGiven?: boolean;
    watch?: boolean;
    /** Resolves when the process is asked to stop (`--watch` runs until then). */
    stopSignal?: Promise<string>;
    /** With `watch`: serve the studio from this process over its assistant (see `serveEmailStudio`). */
    studio?: boolean;
  },
): Promise<number> {
  const opened = await open(options);
  if (typeof opened === 'number') return opened;
  const { store, assistant, model, gmail } = opened;
  const out = (line: string) => options.stdout(`${terminalText(line)}\n`);
  const usage = (message: string) => fail(options.stderr, 'TROUPE_CONFIG_INVALID', message);
  try {
    if (options.studio && !options.watch)
      return usage(
        '--studio serves the studio while --watch polls Gmail: give both, or run `troupe studio`.',
      );
    if (gmail) {
      if (options.mailboxGiven)
        return usage(
          'troupe email reads Gmail when Google credentials are set (GOOGLE_CLIENT_ID, GOOGLE_REFRESH_TOKEN, TROUPE_GMAIL_TOKEN_FILE, or the gmail-token.json `troupe gmail auth` saved in TROUPE_DATA_DIR); unset them (or use another TROUPE_DATA_DIR) to read a mailbox file.',
        );
      return await runOnGmail(opened, gmail, options, out);
    }
    if (options.watch)
      return usage(
        '--watch polls Gmail: run `troupe gmail auth` first, or set GOOGLE_CLIENT_ID, GOOGLE_CLIENT_SECRET and GOOGLE_REFRESH_TOKEN (or TROUPE_GMAIL_TOKEN_FILE) (see docs/email.md, “Gmail and Calendar”).',
      );
    let text: string;
    try {
      text = await readFile(options.mailboxFile, 'utf8');
    } catch (error) {
      return fail(
        options.stderr,
        'TROUPE_EMAIL_INVALID',
        `Cannot read the mailbox ${options.mailboxFile} (${describe(error)}).`,
      );
    }
    out(`Email assistant — mailbox ${options.mailboxFile}, model: ${model}, store: ${store.kind}`);
    // Emails an earlier run left mid-way (a failed try, an answer not yet carried through) go on first.
    const waiting = new Set((await assistant.pending()).map((item) => item.emailId));
    for (const record of await assistant.resume())
      if (!waiting.has(record.email.id)) out(`(continued) ${describeRecord(record)}`);
    // A byte-order mark (some editors write one) is not part of the first line's JSON.
    const lines = text.replace(/^\uFEFF/u, '').split('\n');
    let fresh = 0;
    for (const [index, raw] of lines.entries()) {
      if (raw.trim() === '') continue;
      let input: unknown;
      try {
        input = JSON.parse(raw);
      } catch {
        out(`  line ${index + 1}: not JSON; skipped`);
        continue;
      }
      // Seen before under the id the assistant gives it (trimmed, or derived from its content).
      const parsed = parseEmail(input);
      const before = parsed.ok ? await assistant.record(parsed.email.id) : undefined;
      const result = await assistant.receive(input);
      if (isTroupeError(result)) {
        out(`  line ${index + 1}: ${result.message}`);
        continue;
      }
      if (before) continue;
      fresh += 1;
      out(describeRecord(result));
    }
    if (fresh === 0) out('  No new email (each is processed once; state is kept in the store).');
    await printPending(assistant, out);
    return 0;
  } catch (error) {
    // A store write that fails writes nothing: the emails from this one on wait for the next run.
    const code = reportStoreFailure(error, options.stderr);
    if (code === undefined) throw error;
    return code;
  } finally {
    await closeOpened(opened);
  }
}

/** One pass over the Gmail inbox, or with `watch` a pass every poll interval until the stop signal. */
async function runOnGmail(
  opened: Opened,
  gmail: NonNullable<Opened['gmail']>,
  options: {
    watch?: boolean;
    stopSignal?: Promise<string>;
    studio?: boolean;
    env: Readonly<Record<string, string | undefined>>;
    stderr: (text: string) => void;
  },
  out: (line: string) => void,
): Promise<number> {
  const { assistant, account } = { assistant: opened.assistant, account: gmail.account };
  const every = gmail.settings.pollSeconds;
  out(
    `Email assistant — Gmail ${account.address}${options.watch ? ` (every ${every} s until Ctrl-C)` : ''}, model: ${opened.model}, store: ${opened.store.kind}`,
  );
  const receive = async (input: { id: string }) => {
    const before = await assistant.record(input.id);
    const result = await assistant.receive(input);
    if (isTroupeError(result)) out(`  ${input.id}: ${result.message}`);
    else if (!before) out(describeRecord(result));
    // A notify waiting for the person is findable in Gmail (Troupe/Notify), and stays unread.
    if (!isTroupeError(result) && !before && result.state.value === 'notifying')
      await account.mailbox.labelNotify(input.id);
  };
  // Each pass first finishes what an earlier one left half done (a label Gmail refused for a
  // while, a crash mid-email): the email is not handed over again, so resume is what closes it.
  const ingest = {
    poll: async (onMessage: Parameters<typeof account.ingest.poll>[0]) => {
      await assistant.resume();
      return account.ingest.poll(onMessage);
    },
  };
  const failed = (error: unknown) => {
    if (!isTroupeError(error)) throw error;
    return fail(options.stderr, error.code, error.message, exitCodeOf(error));
  };
  if (!options.watch) {
    try {
      const pass = await ingest.poll(receive);
      if (pass.handed.length === 0)
        out('  No new email (each is processed once; state is kept in the store).');
    } catch (error) {
      return failed(error);
    }
    await printPending(assistant, out);
    return 0;
  }
  const { pollGmail } = await import('../adapters/gmail/gmailPoller.js');
  const studio = options.studio
    ? await serveEmailStudio(options.env, opened.store, assistant, opened.logger)
    : undefined;
  if (studio) out(`Troupe Studio: ${studio.url}`);
  const controller = new AbortController();
  void options.stopSignal?.then(() => controller.abort());
  const end = await pollGmail({
    ingest,
    onMessage: receive,
    everySeconds: every,
    signal: controller.signal,
    logger: opened.logger,
    onPass: async (pass) => {
      if (pass.handed.length > 0) await printPending(assistant, out);
    },
  });
  await studio?.close();
  await account.auth.flush();
  if (end.stopped === 'auth') return failed(end.error);
  out('Stopped.');
  return 0;
}

/** `troupe inbox list [--json]`: what waits for the human (with `--json`, as data on stdout). */
export async function runInboxList(options: EmailCommandOptions & { json?: boolean }): Promise<number> {
  const opened = await open(options);
  if (typeof opened === 'number') return opened;
  try {
    const out = (line: string) => options.stdout(`${terminalText(line)}\n`);
    if (options.json) {
      const { assistant } = opened;
      const items = await Promise.all(
        (await assistant.pending()).map((item) => inboxItemJson(assistant, item)),
      );
      options.stdout(jsonText(items));
      return 0;
    }
    await printPending(opened.assistant, out);
    await printFailed(opened.assistant, out);
    return 0;
  } catch (error) {
    const code = reportStoreFailure(error, options.stderr);
    if (code === undefined) throw error;
    return code;
  } finally {
    await closeOpened(opened);
  }
}

/** `troupe inbox retry <email id>`: runs a failed email again (see EmailAssistant.retry). */
export async function runInboxRetry(options: EmailCommandOptions & { emailId: string }): Promise<number> {
  const opened = await open(options);
  if (typeof opened === 'number') return opened;
  const out = (line: string) => options.stdout(`${terminalText(line)}\n`);
  try {
    const record = await opened.assistant.retry(options.emailId);
    out(`Retried ${record.email.id}.`);
    for (const sent of opened.sentNow) out(`  Sent to ${sent.to}: “${sent.subject}”`);
    out(describeRecord(record));
    await printPending(opened.assistant, out);
    return 0;
  } catch (error) {
    const code = reportStoreFailure(error, options.stderr);
    if (code !== undefined) return code;
    if (!isTroupeError(error)) throw error;
    return fail(options.stderr, error.code, error.message);
  } finally {
    await closeOpened(opened);
  }
}

/** The emails that failed, with why and how to run each again. */
async function printFailed(assistant: EmailAssistant, out: (line: string) => void): Promise<void> {
  const failed = await assistant.failed();
  if (failed.length === 0) return;
  out(`Failed (${failed.length}) — run one again with: troupe inbox retry <email id>`);
  for (const email of failed) {
    out(`  ${email.emailId}  “${oneLine(email.subject, 70)}” from ${oneLine(email.from, 60)}`);
    out(`      ${email.error.code}: ${oneLine(email.error.message, 300)}`);
  }
}

/**
 * `troupe inbox show <id> [--json]`: one interrupt whole (the email, the proposed call), and how to
 * answer it; with `--json`, as data on stdout.
 */
export async function runInboxShow(
  options: EmailCommandOptions & { id: string; json?: boolean },
): Promise<number> {
  const opened = await open(options);
  if (typeof opened === 'number') return opened;
  const out = (line: string) => options.stdout(`${terminalText(line)}\n`);
  try {
    const item = await opened.assistant.interrupt(options.id);
    if (!item) {
      return fail(
        options.stderr,
        'TROUPE_INBOX_INVALID',
        `No interrupt ${terminalText(options.id)} in the inbox; \`troupe inbox list\` shows what waits.`,
      );
    }
    if (options.json) {
      options.stdout(jsonText(await inboxItemJson(opened.assistant, item)));
      return 0;
    }
    printItem(item, out);
    return 0;
  } catch (error) {
    const code = reportStoreFailure(error, options.stderr);
    if (code === undefined) throw error;
    return code;
  } finally {
    await closeOpened(opened);
  }
}

function printItem(item: InboxItem, out: (line: string) => void): void {
  out(`${item.id} — ${item.request.action_request.action} — ${item.status}`);
  out('');
  for (const line of item.request.description.split('\n')) out(`  ${line}`);
  // An answered interrupt keeps the call's arguments, not their written-out copy.
  const args = Object.entries(item.request.action_request.args as Record<string, unknown>);
  if (item.status === 'answered' && args.length > 0) {
    out('');
    out(`  # Proposed: ${item.request.action_request.action}`);
    out('');
    for (const [k, v] of args) out(`  **${k}**: ${typeof v === 'string' ? v : JSON.stringify(v)}`);
  }
  out('');
  if (item.status === 'pending')
    out(`Answer with: troupe inbox answer ${item.id} <${ALLOWED(item).join('|')}> [text]`);
  else out(`Answered with ${item.answer?.type}.`);
}

/**
 * `troupe inbox answer <id> <accept|edit|response|ignore> [text]`: answers an interrupt (feedback
 * for `response`, the edited arguments as JSON for `edit`), then shows what happened.
 */
export async function runInboxAnswer(
  options: EmailCommandOptions & { id: string; type: string; text?: string },
): Promise<number> {
  const opened = await open(options);
  if (typeof opened === 'number') return opened;
  const out = (line: string) => options.stdout(`${terminalText(line)}\n`);
  const { assistant, sentNow, bookedNow } = opened;
  try {
    // Said here in the terms of the command line, rather than as the answer shape's field `args`.
    const missing =
      options.text?.trim() || !['edit', 'response'].includes(options.type)
        ? undefined
        : options.type === 'edit'
          ? `An edit needs the changed arguments as JSON, e.g. troupe inbox answer ${options.id} edit '{"subject": "…"}'.`
          : `A response needs your feedback as text, e.g. troupe inbox answer ${options.id} response reply that I agree.`;
    if (missing) throw new TroupeError('TROUPE_INBOX_INVALID', missing);
    const args = options.type === 'response' || options.type === 'edit' ? options.text : undefined;
    const { item, record } = await assistant.answer(options.id, {
      type: options.type,
      ...(args !== undefined ? { args } : {}),
    });
    out(`Answered ${item.id} (${item.request.action_request.action}) with ${options.type}.`);
    if (item.memory)
      out(`  Learned (${item.memory.namespace}, version ${item.memory.version}): ${item.memory.summary}`);
    for (const sent of sentNow)
      out(
        `  Sent to ${sent.to}: “${sent.subject}”${sent.inReplyTo ? ` (in reply to ${sent.inReplyTo})` : ''}`,
      );
    for (const event of bookedNow)
      out(
        `  Booked “${event.subject}” on ${event.day} at ${event.startTime} (${event.timeZone}, ${event.durationMinutes} min) with ${event.attendees.join(', ')}`,
      );
    out(describeRecord(record));
    await printPending(assistant, out);
    return 0;
  } catch (error) {
    if (!isTroupeError(error)) throw error;
    return fail(options.stderr, error.code, error.message, exitCodeOf(error));
  } finally {
    await closeOpened(opened);
  }
}

/** Writes refreshed Google tokens and the usage of model calls out, then closes the store. */
async function closeOpened(opened: Opened): Promise<void> {
  await opened.close();
  await opened.store.close();
}

function describeRecord(record: EmailRecord): string {
  const { email, decision, state } = record;
  const head = `• ${email.id} “${email.subject.replace(/\s+/gu, ' ').slice(0, 70)}” from ${email.from}`;
  const triage = decision
    ? `\n    ${decision.classification.toUpperCase()} (${decision.decidedBy}): ${decision.reasoning}${decision.profileVersion !== undefined ? ` (profile v${decision.profileVersion})` : ''}`
    : '';
  const where = state.value === 'done' ? `done — ${state.context.outcome}` : stateValueText(state.value);
  const error = state.context.error;
  const problem = !error
    ? ''
    : state.value === 'failed'
      ? `\n    ${error.code}: ${error.message}\n    run it again with: troupe inbox retry ${email.id}`
      : `\n    the last try failed (${error.code}: ${error.message}); it is tried again on the next run`;
  return `${head}${triage}\n    now: ${where}${record.interruptId ? ` — waiting for you (${record.interruptId})` : ''}${problem}`;
}

async function printPending(assistant: EmailAssistant, out: (line: string) => void): Promise<void> {
  const pending = await assistant.pending();
  if (pending.length === 0) {
    out('Nothing waits for you.');
    return;
  }
  out(
    `Waiting for you (${pending.length}) — answer with: troupe inbox answer <id> <${'accept|edit|response|ignore'}> [text]`,
  );
  for (const item of pending) {
    const action = item.request.action_request;
    const email = /^## Email: (.*)$/mu.exec(item.request.description)?.[1] ?? '';
    out(`  ${item.id}  ${action.action}  [${ALLOWED(item).join(', ')}]  “${email}”`);
    const args = action.args as Record<string, unknown>;
    if (action.action === 'send_email_tool')
      out(`      reply to ${args.to}: ${oneLine(String(args.content ?? ''), 100)}`);
    else if (action.action === 'schedule_meeting_tool')
      out(
        `      meeting “${args.subject}” on ${args.preferred_day} at ${args.start_time} (${args.time_zone}, ${args.duration_minutes} min) with ${(args.attendees as string[] | undefined)?.join(', ')}`,
      );
    else if (action.action === 'Question') out(`      asks: ${oneLine(String(args.content ?? ''), 100)}`);
  }
  out('  (troupe inbox show <id> prints one whole: the email and the full draft.)');
}

/** Text on one line, cut to `max` characters. */
function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/gu, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}
