import type { EmailAssistant } from '../actors/email/emailAssistant.js';
import type { InboxItem } from '../actors/email/emailRecord.js';
import type { Runtime } from '../actors/runtimeOptions.js';
import type { TerminalTransport } from '../adapters/terminal/terminalTransport.js';
import { postTerminalMessage } from '../app/terminalChannel.js';
import { emailErrorCodes } from '../ports/errorCodes.js';
import { TroupeError } from '../ports/troupeError.js';
import type { StudioActions } from './studioApi.js';

/** What the studio's POST routes act on: a runtime with a terminal playground, and an email assistant. */
export interface RuntimeStudioActionsOptions {
  runtime: Runtime;
  assistant: EmailAssistant;
  transport: TerminalTransport;
  /** The playground channel. */
  channel: { kind: string; id: string };
  /** Who the person at the page is in the playground. */
  person: { id: string; name: string };
}

const refuse = (code: TroupeError['code'], message: string, status: number): never => {
  throw new TroupeError(code, message, { details: { status } });
};

/**
 * The studio's actions on a runtime and an email assistant: each refusal is a TroupeError whose
 * `details.status` is the HTTP status the server answers with.
 */
export function runtimeStudioActions(options: RuntimeStudioActionsOptions): StudioActions {
  return { ...inboxStudioActions(options.assistant), ...playgroundStudioActions(options) };
}

/** The playground's actions: the person's messages, summons and dismissals in its channel. */
export function playgroundStudioActions(
  options: Omit<RuntimeStudioActionsOptions, 'assistant'>,
): Pick<StudioActions, 'post' | 'summon' | 'dismiss' | 'create'> {
  const { runtime, transport, channel, person } = options;
  const sendOrRefuse = (event: unknown) => {
    const result = runtime.send(event);
    if (!result.accepted) refuse(result.error.code, result.error.message, 400);
  };
  return {
    post({ text, replyTo }) {
      const target = replyTo !== undefined ? transport.lookup(replyTo) : undefined;
      if (replyTo !== undefined && !target)
        refuse(
          'TROUPE_STUDIO_BAD_REQUEST',
          `replyTo: there is no message ${replyTo} in the playground.`,
          400,
        );
      const { message, result } = postTerminalMessage(runtime, transport, {
        channel,
        author: person,
        text,
        ...(target ? { replyTo: target } : {}),
      });
      if (!result.accepted) refuse(result.error.code, result.error.message, 400);
      return { id: message.messageId };
    },
    summon(avatarId) {
      sendOrRefuse({ type: 'avatar.summon', channel, avatarId, by: person });
    },
    dismiss(avatarId) {
      sendOrRefuse({ type: 'avatar.dismiss', channel, avatarId });
    },
    async create(name) {
      const made = await createOrRefuse(runtime, { name, by: person, channel });
      sendOrRefuse({ type: 'avatar.summon', channel, avatarId: made.avatar.id, by: person });
      const { id, name: shown, emoji } = made.avatar;
      return { avatar: { id, name: shown, ...(emoji ? { emoji } : {}) }, created: made.created };
    },
  };
}

/** The HTTP status each refusal to create an avatar is answered with. */
const creationStatus: Partial<Record<string, number>> = {
  TROUPE_AVATAR_CREATION_OFF: 404,
  TROUPE_AVATAR_NAME_INVALID: 400,
  TROUPE_AVATAR_NAME_TAKEN: 409,
  TROUPE_AVATAR_CREATION_LIMIT: 429,
  TROUPE_RUNTIME_STOPPED: 503,
};

/** `runtime.createAvatar`, its refusals carrying the HTTP status to answer with. */
async function createOrRefuse(runtime: Runtime, request: Parameters<Runtime['createAvatar']>[0]) {
  try {
    return await runtime.createAvatar(request);
  } catch (error) {
    if (!TroupeError.isInstance(error)) throw error;
    return refuse(error.code, error.message, creationStatus[error.code] ?? 503);
  }
}

/**
 * The inbox's actions on an email assistant, the same calls `troupe inbox answer` and `retry`
 * make (of two answers to one interrupt, one wins; the other is refused with 409).
 */
export function inboxStudioActions(assistant: EmailAssistant): Pick<StudioActions, 'answer' | 'retry'> {
  return {
    answer: (interruptId, answer) => answerInterrupt(assistant, interruptId, answer),
    async retry(emailId) {
      try {
        const record = await assistant.retry(emailId);
        return { emailState: record.state.value };
      } catch (error) {
        if (TroupeError.isInstance(error) && error.code === emailErrorCodes.inboxInvalid)
          refuse(error.code, error.message, /^No email/u.test(error.message) ? 404 : 409);
        throw error;
      }
    },
  };
}

/** An answer to an interrupt: 404 unknown, 409 answered already (or at the same time), 400 not allowed. */
async function answerInterrupt(
  assistant: EmailAssistant,
  interruptId: string,
  answer: Parameters<StudioActions['answer']>[1],
): ReturnType<StudioActions['answer']> {
  const known: InboxItem | undefined = await assistant.interrupt(interruptId);
  if (!known) refuse(emailErrorCodes.inboxInvalid, `No interrupt ${interruptId} in the inbox.`, 404);
  if (known?.status === 'answered')
    refuse(
      emailErrorCodes.inboxInvalid,
      `Interrupt ${interruptId} was already answered (${known.answer?.type}).`,
      409,
    );
  try {
    const { item, record } = await assistant.answer(interruptId, answer);
    return { item, emailState: record.state.value };
  } catch (error) {
    if (TroupeError.isInstance(error) && error.code === emailErrorCodes.inboxInvalid)
      refuse(error.code, error.message, /already answered|at the same time/u.test(error.message) ? 409 : 400);
    throw error;
  }
}
