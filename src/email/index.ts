/**
 * Troupe's email assistant (`troupe/email`) for apps that embed it: the {@link EmailAssistant}
 * (each email through the lifecycle statechart, the human-in-the-loop inbox, preference memory),
 * the pieces it is made of (input parsing, triage, the Agent Inbox shapes, the response tools, the
 * memory update), and the local mailbox and calendar kept in Troupe's store.
 *
 * @example
 * ```ts
 * const store = await openSqliteStore({ path: './.troupe/troupe.db' });
 * const assistant = new EmailAssistant({
 *   store,
 *   mailbox: createLocalMailbox(store.documents),
 *   calendar: createLocalCalendar(store.documents),
 *   clock: systemClock,
 *   userName: 'Sam',
 *   timeZone: 'Europe/Berlin',
 * });
 * const record = await assistant.receive({ id: 'm1', from: 'ben@example.com', to: 'sam@acme.dev', subject: 'Call?', body: '…' });
 * const waiting = await assistant.pending(); // each with its id, request and allowed answers
 * await assistant.answer('m1#1', { type: 'accept' });
 * ```
 * @packageDocumentation
 */
export { SimulatedClock, systemClock } from '../actors/clock.js';
export {
  EmailAssistant,
  type EmailAssistantChange,
  type EmailAssistantOptions,
} from '../actors/email/emailAssistant.js';
export {
  type AnsweredInterrupt,
  type EmailRecord,
  type FailedEmail,
  type InboxItem,
  KEPT_BODY,
} from '../actors/email/emailRecord.js';
export {
  createLocalCalendar,
  createLocalMailbox,
  type LocalEvent,
  type SentReply,
} from '../adapters/mail/localMailbox.js';
export type { AgentModel, AgentStepRequest, AgentTool, AgentToolCall } from '../ports/agentModel.js';
export type { Calendar, DayAvailability, EmailReply, Mailbox, MeetingRequest } from '../ports/mailbox.js';
export type { ObjectModel } from '../ports/objectModel.js';
export { type AgentTurn, agentMessages } from './agentHistory.js';
export {
  disallowed,
  editedArgs,
  type HumanResponse,
  humanResponseSchema,
  type InterruptConfig,
  type InterruptRequest,
  type MemoryUpdateRequest,
  memoryUpdateFor,
  NOTIFY_ACTION,
  notifyInterrupt,
  type ReviewedTool,
  toolInterrupt,
} from './agentInbox.js';
export {
  type EmailAddress,
  formatAddressList,
  greetingName,
  isEmailAddress,
  parseAddressHeader,
  parseRecipients,
  senderAddress,
} from './emailAddress.js';
export { type Email, type ParsedEmail, parseEmail } from './emailInput.js';
export { emailMarkdown } from './emailMarkdown.js';
export {
  BODY_MAX_CHARS,
  cutText,
  HTML_MAX_CHARS,
  HTML_TEXT_MAX_CHARS,
  htmlToText,
} from './htmlText.js';
export {
  allowedAnswers,
  answerTypes,
  type InboxItemJson,
  inboxEmailJsonSchema,
  inboxItemJsonSchema,
  inboxListJsonSchema,
} from './inboxItemJson.js';
export { type MemoryRefusal, REFUSALS_KEY, readRefusals } from './memoryRefusals.js';
export {
  defaultCalendarPreferences,
  defaultResponsePreferences,
  type MemoryInteraction,
  type MemoryUpdateResult,
  updateMemory,
} from './memoryUpdate.js';
export { COMPACT_AT, COMPACT_TO, MAX_PROFILE } from './profileCompaction.js';
export { composeReply, type ReplyEnvelope, replySubject } from './replyMessage.js';
export {
  type AgentStep,
  agentSystemPrompt,
  MODEL_NEEDED,
  nextToolCall,
  offlineToolCall,
  type ResponseAgentInput,
  responseAgentTools,
} from './responseAgent.js';
export {
  isReviewed,
  type ResponseToolCall,
  type ResponseToolName,
  responseToolSchemas,
} from './responseTools.js';
export type { TriageClassification, TriageDecision } from './triageDecision.js';
export {
  type EvalReport,
  formatEvalReport,
  type LabelledEmail,
  parseEvalSet,
  scoreEval,
} from './triageEval.js';
export {
  defaultTriagePreferences,
  memoryNamespaces,
  PREFERENCES_KEY,
  type TriagePreferences,
  type TriageRule,
} from './triagePreferences.js';
export { escapeUntrusted, untrustedEmail } from './triagePrompt.js';
export {
  readTriagePreferences,
  readTriageProfile,
  type TriageProfile,
  type TriageRouterOptions,
  triageEmail,
} from './triageRouter.js';
