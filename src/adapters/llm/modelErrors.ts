import {
  APICallError,
  LoadAPIKeyError,
  NoObjectGeneratedError,
  NoOutputGeneratedError,
  RetryError,
} from 'ai';
import { type ModelErrorCode, modelErrorCodes } from '../../ports/errorCodes.js';
import { isTroupeError, TroupeError } from '../../ports/troupeError.js';

export { type ModelErrorCode, modelErrorCodes };

/** What {@link toModelError} knows about the call that failed. */
export interface ModelErrorContext {
  /** `provider:model`, named in every message. */
  modelId: string;
  /** The environment variable holding the key, named in auth errors (e.g. `OPENAI_API_KEY`). */
  apiKeyVariable?: string;
  /** The call's timeout, for the timeout message. */
  timeoutMs?: number;
  /** True when the call's own timeout fired. */
  timedOut?: boolean;
  /** True when the caller's signal aborted the call. */
  aborted?: boolean;
}

/** First line of a provider's message, at most 300 characters. */
function brief(text: string): string {
  const line = (text.split('\n')[0] ?? '').trim();
  return line.length > 300 ? `${line.slice(0, 299)}…` : line;
}

function hostOf(url: string | undefined): string | undefined {
  if (!url) return undefined;
  try {
    return new URL(url).host;
  } catch {
    return undefined;
  }
}

function seconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`;
}

function isAbortLike(error: unknown): error is Error {
  return (
    (error instanceof Error || error instanceof DOMException) &&
    (error.name === 'AbortError' || error.name === 'TimeoutError')
  );
}

/**
 * Maps whatever a model call threw (AI SDK `APICallError`, a `RetryError` wrapping the attempts,
 * an abort, a schema mismatch) to a {@link TroupeError} with a `TROUPE_MODEL_*` code (see
 * {@link modelErrorCodes}), an actionable one-line message without stack traces or secrets, and
 * `details` for logs (`model`, `statusCode`, `attempts`). A `TroupeError` passes through unchanged.
 */
export function toModelError(error: unknown, context: ModelErrorContext): TroupeError {
  if (isTroupeError(error)) return error;
  const model = context.modelId;
  const make: MakeModelError = (code, message, retryable, details = {}) =>
    new TroupeError(code, message, { retryable, cause: error, details: { model, ...details } });

  const timeoutText = context.timeoutMs !== undefined ? ` within ${seconds(context.timeoutMs)}` : ' in time';
  if (context.aborted)
    return make(modelErrorCodes.aborted, `The call to model ${model} was cancelled.`, false);
  if (context.timedOut) {
    return make(
      modelErrorCodes.timeout,
      `Model ${model} did not answer${timeoutText}. Check that the model server is up and not overloaded, or raise the timeout (TROUPE_MODEL_TIMEOUT).`,
      true,
    );
  }

  let last: unknown = error;
  let attempts = 1;
  if (RetryError.isInstance(error)) {
    attempts = error.errors.length;
    last = error.lastError;
  }

  if (APICallError.isInstance(last)) return httpModelError(last, attempts, context, make);

  if (LoadAPIKeyError.isInstance(last)) {
    const key = context.apiKeyVariable ?? 'the API key setting';
    return make(modelErrorCodes.auth, `Model ${model} has no API key. Set ${key}.`, false, { attempts });
  }
  if (NoObjectGeneratedError.isInstance(last) || NoOutputGeneratedError.isInstance(last)) {
    return make(
      modelErrorCodes.failed,
      `Model ${model} answered, but not in the expected format: ${brief(last.message)}`,
      true,
      { attempts },
    );
  }
  if (isAbortLike(last)) {
    return last.name === 'TimeoutError'
      ? make(modelErrorCodes.timeout, `Model ${model} did not answer${timeoutText}.`, true, { attempts })
      : make(modelErrorCodes.aborted, `The call to model ${model} was cancelled.`, false, { attempts });
  }
  const message = last instanceof Error ? brief(last.message) : brief(String(last));
  return make(modelErrorCodes.failed, `The call to model ${model} failed: ${message}`, false, { attempts });
}

/** Builds the {@link TroupeError} for one failed call: its code, message, retryability and details. */
type MakeModelError = (
  code: ModelErrorCode,
  message: string,
  retryable: boolean,
  details?: Record<string, unknown>,
) => TroupeError;

/** A provider's HTTP answer (or no answer at all) as a model error, by status. */
function httpModelError(
  last: APICallError,
  attempts: number,
  context: ModelErrorContext,
  make: MakeModelError,
): TroupeError {
  const model = context.modelId;
  const status = last.statusCode;
  const details = { attempts, ...(status !== undefined ? { statusCode: status } : {}) };
  const key = context.apiKeyVariable ?? 'the API key setting';
  if (status === 401) {
    return make(
      modelErrorCodes.auth,
      `Model ${model} rejected the API key (HTTP 401). Check ${key}.`,
      false,
      details,
    );
  }
  if (status === 403) {
    return make(
      modelErrorCodes.auth,
      `Model ${model} refused access (HTTP 403). Check ${key} and that the key may use this model.`,
      false,
      details,
    );
  }
  if (status === 429) {
    const retryAfter = last.responseHeaders?.['retry-after'];
    const wait = retryAfter ? ` and asked to wait ${retryAfter}s` : '';
    return make(
      modelErrorCodes.rateLimited,
      `Model ${model} is rate-limited (HTTP 429)${wait}. Try again later, or lower TROUPE_MODEL_CONCURRENCY.`,
      true,
      details,
    );
  }
  if (status === 408) {
    return make(
      modelErrorCodes.timeout,
      `Model ${model} timed out on the provider's side (HTTP 408). Try again later.`,
      true,
      details,
    );
  }
  if (status === undefined || status >= 500) {
    const host = hostOf(last.url);
    const where = host ? ` at ${host}` : '';
    const what =
      status === undefined
        ? `could not be reached${where}: ${brief(last.message)}. Check that the server is running and TROUPE_MODEL_BASE_URL is right.`
        : `is unavailable${where} (HTTP ${status}). The provider may be down or overloaded; try again later.`;
    return make(modelErrorCodes.unavailable, `Model ${model} ${what}`, true, details);
  }
  const hint =
    status === 404 ? ' Check the model name (TROUPE_MODEL) and the server URL (TROUPE_MODEL_BASE_URL).' : '';
  return make(
    modelErrorCodes.failed,
    `Model ${model} refused the request (HTTP ${status}): ${brief(last.message)}.${hint}`,
    false,
    details,
  );
}
