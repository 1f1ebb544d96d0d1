import type { Logger } from '../../logging/logger.js';
import type { TokenUsage } from '../../ports/model.js';
import type { ConcurrencyLimit } from './concurrencyLimit.js';
import { toModelError } from './modelErrors.js';

/** How one model call is run: its id for logs and errors, its budget and its share of the limit. */
export interface ModelCallOptions {
  /** `provider:model`. */
  modelId: string;
  /** What the call is for, in logs: `turn`, `structured`, … */
  operation: string;
  /** Time allowed from the moment the call gets a slot, retries included (ms). */
  timeoutMs: number;
  /** The caller's signal: aborts the call, or its wait for a slot. */
  signal?: AbortSignal | undefined;
  /** Shared limit on calls in flight; none means unlimited. */
  limit?: ConcurrencyLimit | undefined;
  logger: Logger;
  /** Named in auth errors. */
  apiKeyVariable?: string | undefined;
}

/** What a call hands back: its value and, for the log line, usage and shape. */
export interface ModelCallOutcome<T> {
  value: T;
  usage?: TokenUsage;
  steps?: number;
  finishReason?: string;
}

/**
 * Runs one model call: waits for a slot in the concurrency limit, gives the call an abort signal
 * that fires on the timeout or on the caller's signal (`AbortSignal.any`), logs usage at `info`
 * (model, operation, tokens, milliseconds; never prompts, replies or keys) and maps any failure to
 * a `TROUPE_MODEL_*` {@link TroupeError}, logged at `warn`.
 */
export async function runModelCall<T>(
  options: ModelCallOptions,
  call: (abortSignal: AbortSignal) => Promise<ModelCallOutcome<T>>,
): Promise<T> {
  const { modelId, operation, logger } = options;
  const started = performance.now();
  let timeout: AbortSignal | undefined;
  try {
    const task = async () => {
      timeout = AbortSignal.timeout(options.timeoutMs);
      const signal = options.signal ? AbortSignal.any([timeout, options.signal]) : timeout;
      return call(signal);
    };
    const outcome = options.limit ? await options.limit.run(task, options.signal) : await task();
    logger.info(
      {
        model: modelId,
        operation,
        ms: Math.round(performance.now() - started),
        inputTokens: outcome.usage?.inputTokens,
        outputTokens: outcome.usage?.outputTokens,
        totalTokens: outcome.usage?.totalTokens,
        steps: outcome.steps,
        finishReason: outcome.finishReason,
      },
      'model call finished',
    );
    return outcome.value;
  } catch (error) {
    const failure = toModelError(error, {
      modelId,
      timeoutMs: options.timeoutMs,
      aborted: options.signal?.aborted === true,
      timedOut: timeout?.aborted === true,
      ...(options.apiKeyVariable ? { apiKeyVariable: options.apiKeyVariable } : {}),
    });
    logger.warn(
      {
        model: modelId,
        operation,
        ms: Math.round(performance.now() - started),
        code: failure.code,
        retryable: failure.retryable,
        statusCode: failure.details?.statusCode,
        attempts: failure.details?.attempts,
      },
      failure.message,
    );
    throw failure;
  }
}
