import { readFile } from 'node:fs/promises';
import type { EmailAssistant, EmailRecord, InboxItem } from '../actors/emailAssistant.js';
import { openDefaultStore } from '../adapters/store/storeFromEnv.js';
import { ConfigError } from '../config/configError.js';
import { terminalText } from '../delivery/terminalText.js';
import { createLogger } from '../logging/logger.js';
import type { TroupeStore } from '../ports/store.js';
import { describe, isTroupeError } from '../ports/troupeError.js';
import { type OpenedEmailAssistant, openEmailAssistant } from './openEmailAssistant.js';

/** What the email commands need. */
export interface EmailCommandOptions {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  env: Readonly<Record<string, string | undefined>>;
}

interface Opened extends OpenedEmailAssistant {
  store: TroupeStore;
}

const ALLOWED = (item: InboxItem) =>
  (['accept', 'edit', 'response', 'ignore'] as const).filter(
    (t) =>
      item.request.config[
        (
          {
            accept: 'allow_accept',
            edit: 'allow_edit',
            response: 'allow_respond',
            ignore: 'allow_ignore',
          } as const
        )[t]
      ],
  );

/** The assistant on the default store, the local mailbox and calendar, and the model of the environment. */
async function open(options: EmailCommandOptions): Promise<Opened | number> {
  const fail = (code: string, message: string) => {
    options.stderr(`error ${code}: ${terminalText(message)}\n`);
    return 2;
  };
  const logger = createLogger({ level: options.env.LOG_LEVEL?.trim().toLowerCase() || 'warn' });
  let store: TroupeStore;
  try {
    store = await openDefaultStore(options.env, { logger });
  } catch (error) {
    if (isTroupeError(error)) return fail(error.code, error.message);
    throw error;
  }
  try {
    return { store, ...openEmailAssistant(options.env, store, logger) };
  } catch (error) {
    await store.close();
    if (!ConfigError.isInstance(error)) throw error;
    return fail(error.code, error.message);
  }
}

/**
 * `troupe email [--mailbox file.jsonl]`: runs the assistant on a mailbox file (one email per line,
 * any input shape; default: the sample mailbox that ships with Troupe) and prints each triage
 * decision with its reasoning, what it did, and what waits for the human. State is kept in the
 * store, so a second run processes only new emails.
 */
export async function runEmail(options: EmailCommandOptions & { mailboxFile: string }): Promise<number> {
  const opened = await open(options);
  if (typeof opened === 'number') return opened;
  const { store, assistant, model } = opened;
  const out = (line: string) => options.stdout(`${terminalText(line)}\n`);
  try {
    let text: string;
    try {
      text = await readFile(options.mailboxFile, 'utf8');
    } catch (error) {
      options.stderr(
        `error TROUPE_EMAIL_INVALID: Cannot read the mailbox ${options.mailboxFile} (${describe(error)}).\n`,
      );
      return 2;
    }
    out(`Email assistant — mailbox ${options.mailboxFile}, model: ${model}, store: ${store.kind}`);
    const lines = text.split('\n');
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
      const before = await assistant.record(
        typeof input === 'object' && input && 'id' in input ? String((input as { id: unknown }).id) : '',
      );
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
  } finally {
    await store.close();
  }
}

/** `troupe inbox list`: what waits for the human. */
export async function runInboxList(options: EmailCommandOptions): Promise<number> {
  const opened = await open(options);
  if (typeof opened === 'number') return opened;
  try {
    await printPending(opened.assistant, (line) => options.stdout(`${terminalText(line)}\n`));
    return 0;
  } finally {
    await opened.store.close();
  }
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
  const { assistant, store, mailbox, calendar } = opened;
  try {
    const before = (await mailbox.sent()).length;
    const booked = new Set((await calendar.events()).map((e) => e.eventId));
    const args = options.type === 'response' || options.type === 'edit' ? options.text : undefined;
    const { item, record } = await assistant.answer(options.id, {
      type: options.type,
      ...(args !== undefined ? { args } : {}),
    });
    out(`Answered ${item.id} (${item.request.action_request.action}) with ${options.type}.`);
    if (item.memory)
      out(`  Learned (${item.memory.namespace}, version ${item.memory.version}): ${item.memory.summary}`);
    for (const sent of (await mailbox.sent()).slice(before))
      out(
        `  Sent to ${sent.to}: “${sent.subject}”${sent.inReplyTo ? ` (in reply to ${sent.inReplyTo})` : ''}`,
      );
    for (const event of (await calendar.events()).filter((e) => !booked.has(e.eventId)))
      out(
        `  Booked “${event.subject}” on ${event.day} at ${event.startTime} (${event.timeZone}, ${event.durationMinutes} min) with ${event.attendees.join(', ')}`,
      );
    out(describeRecord(record));
    await printPending(assistant, out);
    return 0;
  } catch (error) {
    if (!isTroupeError(error)) throw error;
    options.stderr(`error ${error.code}: ${terminalText(error.message)}\n`);
    return 2;
  } finally {
    await store.close();
  }
}

function describeRecord(record: EmailRecord): string {
  const { email, decision, state } = record;
  const head = `• ${email.id} “${email.subject.replace(/\s+/gu, ' ').slice(0, 70)}” from ${email.from}`;
  const triage = decision
    ? `\n    ${decision.classification.toUpperCase()} (${decision.decidedBy}): ${decision.reasoning}`
    : '';
  const where = state.value === 'done' ? `done — ${state.context.outcome}` : dotted(state.value);
  return `${head}${triage}\n    now: ${where}${record.interruptId ? ` — waiting for you (${record.interruptId})` : ''}`;
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
    const detail =
      action.action === 'Email Assistant: notify'
        ? (/^## Email: (.*)$/mu.exec(item.request.description)?.[1] ?? '')
        : JSON.stringify(action.args).slice(0, 160);
    out(`  ${item.id}  ${action.action}  [${ALLOWED(item).join(', ')}]  ${detail}`);
  }
}

/** `{ responding: 'reviewing' }` as `responding.reviewing`. */
function dotted(value: unknown): string {
  if (typeof value === 'string') return value;
  const [key, inner] = Object.entries(value as Record<string, unknown>)[0] ?? ['?', ''];
  return `${key}.${dotted(inner)}`;
}
