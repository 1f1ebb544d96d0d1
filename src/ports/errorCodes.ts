/**
 * Every error code Troupe reports, collected per domain. A code is stable: programs branch on
 * it, docs name it, and it never changes meaning. {@link TroupeErrorCode} is the union of all.
 */

/** The runtime's front door: events, avatars, the runtime's own lifecycle. */
export const runtimeErrorCodes = {
  /** An inbound event failed validation; the message names every bad field. */
  eventInvalid: 'TROUPE_EVENT_INVALID',
  /** The avatar definitions did not validate (or ids repeat). */
  avatarsInvalid: 'TROUPE_AVATARS_INVALID',
  /** An avatars file could not be found. */
  avatarsNotFound: 'TROUPE_AVATARS_NOT_FOUND',
  /** An avatars file could not be read or parsed. */
  avatarsUnreadable: 'TROUPE_AVATARS_UNREADABLE',
  /**
   * An avatar's `model:` names a provider or profile nobody configured, or a provider without its
   * key; the message names the avatar and the value. Raised when the runtime starts.
   */
  avatarModelInvalid: 'TROUPE_AVATAR_MODEL_INVALID',
  /** An event names an avatar id nobody defined. */
  avatarUnknown: 'TROUPE_AVATAR_UNKNOWN',
  /** Summoning an unknown name would create an avatar, but creating is off here. */
  avatarCreationOff: 'TROUPE_AVATAR_CREATION_OFF',
  /** A name for a new avatar is not usable (control characters, nothing visible, too long). */
  avatarNameInvalid: 'TROUPE_AVATAR_NAME_INVALID',
  /** A name for a new avatar is already a name, alias or emoji of another avatar. */
  avatarNameTaken: 'TROUPE_AVATAR_NAME_TAKEN',
  /** The person has created as many avatars today as they may (the message says when they can again). */
  avatarCreationLimit: 'TROUPE_AVATAR_CREATION_LIMIT',
  /** `forget` named an avatar that was given to the runtime (an avatars file), not created by summoning. */
  avatarNotCreated: 'TROUPE_AVATAR_NOT_CREATED',
  /** The runtime is stopping and accepts nothing more. */
  stopped: 'TROUPE_RUNTIME_STOPPED',
  /** An inbound event stream errored and was disconnected. */
  streamFailed: 'TROUPE_STREAM_FAILED',
  /** A channel reference (kind or id) is not usable. */
  channelInvalid: 'TROUPE_CHANNEL_INVALID',
  /**
   * Another process sharing the durable store handles this channel (it holds the channel's
   * lease), and an event was refused rather than handed over to it: its sender asked for
   * ownership, or the channel's hand-over queue is full or could not be written.
   */
  channelOwned: 'TROUPE_CHANNEL_OWNED',
  /** A display name is empty or too long. */
  nameInvalid: 'TROUPE_NAME_INVALID',
  /** A stored channel floor is foreign, newer or damaged (it is quarantined). */
  snapshotInvalid: 'TROUPE_SNAPSHOT_INVALID',
  /** A machine uses a construct the compiled engine does not run. */
  machineUnsupported: 'TROUPE_MACHINE_UNSUPPORTED',
  /** The installed xstate is not the version the compiled engine was checked against. */
  xstateUnsupported: 'TROUPE_XSTATE_UNSUPPORTED',
} as const;

/** Preparation, routing and transports. */
export const deliveryErrorCodes = {
  /** Something handed to routing is not a valid OutgoingResponse. */
  responseInvalid: 'TROUPE_RESPONSE_INVALID',
  /** A response with nothing to send (no text, voice or attachment). */
  responseEmpty: 'TROUPE_RESPONSE_EMPTY',
  /** The outbox could not record a response, so it was not sent (sending unrecorded could double it). */
  outboxUnavailable: 'TROUPE_OUTBOX_UNAVAILABLE',
  /** No transport is registered for the channel's kind. */
  transportMissing: 'TROUPE_TRANSPORT_MISSING',
  /** The platform refused or failed the send. */
  transportFailed: 'TROUPE_TRANSPORT_FAILED',
  /** The platform refused for lack of permission (not retryable: a person must grant it). */
  transportForbidden: 'TROUPE_TRANSPORT_FORBIDDEN',
  /** The platform could not be reached (retryable). */
  transportUnavailable: 'TROUPE_TRANSPORT_UNAVAILABLE',
  /** The platform asked us to slow down (retryable; honours retry-after). */
  transportRateLimited: 'TROUPE_TRANSPORT_RATE_LIMITED',
  /** A send took longer than its timeout and was cancelled (retryable). */
  transportTimeout: 'TROUPE_TRANSPORT_TIMEOUT',
  /** The send was cancelled (the runtime stopped past its deadline). */
  transportAborted: 'TROUPE_TRANSPORT_ABORTED',
  /** The transport cannot carry this kind of message. */
  transportUnsupported: 'TROUPE_TRANSPORT_UNSUPPORTED',
  /** A transport's limits are unusable (e.g. a text limit too small to split into). */
  transportLimitInvalid: 'TROUPE_TRANSPORT_LIMIT_INVALID',
  /**
   * The transport answered without a usable receipt, so nobody knows whether the message went out
   * (not retryable: resending blindly could send it twice).
   */
  transportUnconfirmed: 'TROUPE_TRANSPORT_UNCONFIRMED',
} as const;

/** The language-model layer. */
/** Connecting to a chat platform (Discord): what the operator must fix before the bot can run. */
export const platformErrorCodes = {
  discordTokenInvalid: 'TROUPE_DISCORD_TOKEN_INVALID',
  discordIntentMissing: 'TROUPE_DISCORD_INTENT_MISSING',
  discordLoginFailed: 'TROUPE_DISCORD_LOGIN_FAILED',
  /** `--shards` / `--shard-count` do not name a usable set of shards (an id past the count, a repeat). */
  discordShardsInvalid: 'TROUPE_DISCORD_SHARDS_INVALID',
} as const;

export const modelErrorCodes = {
  /** No answer within the call's timeout (also HTTP 408). Retryable. */
  timeout: 'TROUPE_MODEL_TIMEOUT',
  /** HTTP 429: the provider asks us to slow down. Retryable. */
  rateLimited: 'TROUPE_MODEL_RATE_LIMITED',
  /** Connection refused or reset, or HTTP 5xx. Retryable. */
  unavailable: 'TROUPE_MODEL_UNAVAILABLE',
  /** HTTP 401 or 403, or no API key: a person must fix the key. Not retryable. */
  auth: 'TROUPE_MODEL_AUTH',
  /** The model answered with blank text. Retryable (another sample may do better). */
  empty: 'TROUPE_MODEL_EMPTY',
  /** The caller's signal aborted the call. Not retryable. */
  aborted: 'TROUPE_MODEL_ABORTED',
  /** Anything else (bad request, unknown model, output that does not fit the schema). */
  failed: 'TROUPE_MODEL_FAILED',
} as const;

/** Text to speech. */
export const speechErrorCodes = {
  failed: 'TROUPE_SPEECH_FAILED',
  aborted: 'TROUPE_SPEECH_ABORTED',
  empty: 'TROUPE_SPEECH_EMPTY',
  invalidVoice: 'TROUPE_SPEECH_INVALID_VOICE',
  auth: 'TROUPE_SPEECH_AUTH',
  unavailable: 'TROUPE_SPEECH_UNAVAILABLE',
  optionsInvalid: 'TROUPE_SPEECH_OPTIONS_INVALID',
} as const;

/** Stores (memory, SQLite, MongoDB). */
export const storeErrorCodes = {
  /** The store cannot be reached or opened (retryable). */
  unavailable: 'TROUPE_STORE_UNAVAILABLE',
  /** Someone else wrote first (compare-and-set); nothing was written. */
  conflict: 'TROUPE_STORE_CONFLICT',
  /** Stored data is damaged or from an unknown schema. */
  corrupt: 'TROUPE_STORE_CORRUPT',
  /** A value is not storable JSON. */
  invalidValue: 'TROUPE_STORE_INVALID_VALUE',
  /**
   * Another process held the store locked past the busy timeout; nothing was written. Retryable:
   * wait for it or stop it, then try again.
   */
  busy: 'TROUPE_STORE_BUSY',
  /** The disk holding the store is full (or the store reached its size limit); nothing was written. */
  full: 'TROUPE_STORE_FULL',
} as const;

/** Configuration, from the environment or from code. */
export const configErrorCodes = {
  invalid: 'TROUPE_CONFIG_INVALID',
  /**
   * `TROUPE_MODEL_PRICES` is not a price table (or names a file that cannot be read): the message
   * names the model and field, or the file.
   */
  modelPricesInvalid: 'TROUPE_MODEL_PRICES_INVALID',
} as const;

/** The email assistant. */
export const emailErrorCodes = {
  emailInvalid: 'TROUPE_EMAIL_INVALID',
  evalInvalid: 'TROUPE_TRIAGE_EVAL_INVALID',
  inboxInvalid: 'TROUPE_INBOX_INVALID',
  /** A reply, a booking or a calendar check failed in the mailbox or calendar with an error of its own. */
  actionFailed: 'TROUPE_EMAIL_ACTION_FAILED',
  /**
   * The response agent passed a bound on one email (`TROUPE_EMAIL_MAX_STEPS` model steps, or
   * `TROUPE_EMAIL_MAX_UNREVIEWED_CALLS` calls that need no review): the email failed; `troupe inbox
   * retry` runs it again. Not retryable.
   */
  agentLimit: 'TROUPE_EMAIL_AGENT_LIMIT',
  /** A step of one email failed in a way nothing else names (a fault in Troupe): the email failed. */
  emailFailed: 'TROUPE_EMAIL_FAILED',
  /**
   * Google refused the Gmail/Calendar credentials (the refresh token expired or was revoked, the
   * client id or secret is wrong, or a scope is missing): a person must get a new refresh token.
   * That mailbox stops; nothing else does. Not retryable.
   */
  gmailAuth: 'TROUPE_GMAIL_AUTH',
  /** Gmail or Calendar kept answering 429 or 5xx, or could not be reached, after the retries. Retryable. */
  gmailUnavailable: 'TROUPE_GMAIL_UNAVAILABLE',
  /** Gmail or Calendar refused a request for another reason (the message names it). */
  gmailFailed: 'TROUPE_GMAIL_FAILED',
} as const;

/** The answer composer and the entity lookup tool. */
export const toolErrorCodes = {
  /** A tool result envelope did not validate. */
  envelopeInvalid: 'TROUPE_ENVELOPE_INVALID',
  /** An entity mapping (table and column names) is unusable. */
  sqlMappingInvalid: 'TROUPE_SQL_MAPPING_INVALID',
} as const;

/** The scenario simulator. */
export const scenarioErrorCodes = {
  invalid: 'TROUPE_SCENARIO_INVALID',
  syntax: 'TROUPE_SCENARIO_SYNTAX',
  unreadable: 'TROUPE_SCENARIO_UNREADABLE',
} as const;

/** `troupe charts`: exporting statecharts. */
export const chartErrorCodes = {
  /** An unknown format, a module that cannot be loaded or exports no state machine, an unknown export. */
  invalid: 'TROUPE_CHARTS_INVALID',
} as const;

/** `troupe studio`: the local web studio's API. */
export const studioErrorCodes = {
  /** An /api request without the studio's token, or with a wrong one. */
  unauthorized: 'TROUPE_STUDIO_UNAUTHORIZED',
  /** A request from a page of another origin (a browser's `Origin` header that is not the studio's). */
  origin: 'TROUPE_STUDIO_ORIGIN',
  /** A request whose `Host` header names another host (DNS rebinding). */
  host: 'TROUPE_STUDIO_HOST',
  /** A body that is not JSON, too large, or not the shape the route takes; the message names the field. */
  badRequest: 'TROUPE_STUDIO_BAD_REQUEST',
  /** No such route (or method). */
  notFound: 'TROUPE_STUDIO_NOT_FOUND',
  /** A playground POST to a studio that only watches its runtime (started without `--playground`). */
  readOnly: 'TROUPE_STUDIO_READ_ONLY',
  /** The studio failed on a request (a bug); its log has the cause. */
  failed: 'TROUPE_STUDIO_FAILED',
} as const;

/** `troupe/testing`. */
export const testingErrorCodes = {
  /** Work on a simulated clock did not settle: an external wait went unanswered past its limit. */
  notSettled: 'TROUPE_TEST_NOT_SETTLED',
  /** A mock model with a script of replies was called more times than the script has replies. */
  scriptEnded: 'TROUPE_TEST_SCRIPT_ENDED',
  /** A mock model's reply calls a tool the turn does not offer. */
  toolMissing: 'TROUPE_TEST_TOOL_MISSING',
} as const;

type CodesOf<T> = T[keyof T];

/** One of the model layer's codes. */
export type ModelErrorCode = CodesOf<typeof modelErrorCodes>;
/** One of the delivery codes (routing, transports, outbox). */
export type DeliveryErrorCode = CodesOf<typeof deliveryErrorCodes>;
/** One of the store codes. */
export type StoreErrorCode = CodesOf<typeof storeErrorCodes>;
/** One of the speech codes. */
export type SpeechErrorCode = CodesOf<typeof speechErrorCodes>;
/** One of the scenario codes. */
export type ScenarioErrorCode = CodesOf<typeof scenarioErrorCodes>;

/** Every code a {@link TroupeError} may carry. */
export type TroupeErrorCode =
  | CodesOf<typeof runtimeErrorCodes>
  | DeliveryErrorCode
  | CodesOf<typeof platformErrorCodes>
  | ModelErrorCode
  | SpeechErrorCode
  | StoreErrorCode
  | CodesOf<typeof configErrorCodes>
  | CodesOf<typeof toolErrorCodes>
  | CodesOf<typeof emailErrorCodes>
  | ScenarioErrorCode
  | CodesOf<typeof chartErrorCodes>
  | CodesOf<typeof studioErrorCodes>
  | CodesOf<typeof testingErrorCodes>;

/** Every code, for docs and for checking a code read from outside (a stored outcome, a log). */
export const troupeErrorCodes: readonly TroupeErrorCode[] = [
  runtimeErrorCodes,
  deliveryErrorCodes,
  platformErrorCodes,
  modelErrorCodes,
  speechErrorCodes,
  storeErrorCodes,
  configErrorCodes,
  toolErrorCodes,
  emailErrorCodes,
  scenarioErrorCodes,
  chartErrorCodes,
  studioErrorCodes,
  testingErrorCodes,
].flatMap((codes) => Object.values(codes) as TroupeErrorCode[]);
