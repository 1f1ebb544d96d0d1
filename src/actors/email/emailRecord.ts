import type { StateValue } from 'xstate';
import { type HumanResponse, type InterruptRequest, NOTIFY_ACTION } from '../../email/agentInbox.js';
import type { Email } from '../../email/emailInput.js';
import type { AgentStep } from '../../email/responseAgent.js';
import type { ResponseToolCall } from '../../email/responseTools.js';
import type { TriageDecision } from '../../email/triageDecision.js';
import type { EmailLifecycleContext } from '../../machines/emailLifecycle.machine.js';

export const EMAILS = 'email-lifecycle';
/** The interrupts waiting for the human; an answered one leaves it for its email's record. */
export const INBOX = 'email-inbox';
/** Lifecycle states an email does not leave. */
export const FINISHED = new Set(['done', 'invalid', 'failed']);

/** A state value as one word or `parent.child`. */
export function stateName(value: StateValue): string {
  if (typeof value === 'string') return value;
  return Object.entries(value)
    .map(([parent, child]) => `${parent}.${stateName(child as StateValue)}`)
    .join(', ');
}

/** Whether a state value is `state`, or the `responding` sub-state `sub`. */
export function isIn(value: StateValue, state: string, sub?: string): boolean {
  if (sub === undefined) return value === state;
  return typeof value === 'object' && (value as Record<string, unknown>)[state] === sub;
}

/** One email as the assistant keeps it: the lifecycle's state, the email, and the agent's work. */
export interface EmailRecord {
  email: Email;
  state: { value: StateValue; context: EmailLifecycleContext };
  decision?: TriageDecision;
  /** Calls carried out, with their results. */
  steps: AgentStep[];
  /** The call proposed and not yet carried out (waiting for review, or about to run). */
  proposed?: ResponseToolCall | undefined;
  /** The interrupt waiting for the human, if any. */
  interruptId?: string | undefined;
  /** Interrupts raised for this email so far (each gets the next number in its id). */
  asked?: number;
  /** When the interrupt it waits on was raised. */
  askedAt?: number | undefined;
  /** Model steps the agent took on this email since it was received or retried (see the bounds). */
  agentSteps?: number;
  /** Calls of tools that need no review carried out since it was received or retried. */
  unreviewed?: number;
  /**
   * The interrupts answered, in order: the answer is written here, with the record, before
   * anything acts on it ({@link EmailAssistant.interrupt} gives each back as an inbox item).
   */
  answered?: AnsweredInterrupt[];
  /**
   * The stored version this record was read at (0: not stored yet). The first write creates the
   * record only if no other process did, which is how an email is claimed.
   */
  stored: number;
  /**
   * Set once the email is done: its body was cut to its first {@link KEPT_BODY} characters, its
   * steps keep their calls but not their results, the triage reasoning is kept in `decision`
   * only (the lifecycle's context has it null), and an accepted call's arguments in its step only.
   * Its context is stored without the fields at their resting values (no feedback, no attempts,
   * ...) and its email without empty lists; reading the record puts them back.
   */
  compacted?: true;
  /**
   * The interrupt raised since the record was read, written with it (never stored in it): the
   * two are written together or not at all.
   */
  raising?: InboxItem | undefined;
}

/** Model steps the agent may take per email by default (`TROUPE_EMAIL_MAX_STEPS`). */
export const DEFAULT_MAX_STEPS = 12;
/** Calls of tools that need no review per email by default (`TROUPE_EMAIL_MAX_UNREVIEWED_CALLS`). */
export const DEFAULT_MAX_UNREVIEWED_CALLS = 3;

/** Characters of a finished email's body that its record keeps (the mailbox keeps the rest). */
export const KEPT_BODY = 100;

/**
 * An answered interrupt as its email's record keeps it: what was asked, how the human answered,
 * and what the answer taught. The request is written out again from it and the email when read
 * ({@link EmailAssistant.interrupt}).
 */
export interface AnsweredInterrupt {
  /** Its number on the email: the interrupt's id is `<email id>#<n>`. */
  n: number;
  /** The request's action: {@link NOTIFY_ACTION} or the reviewed tool. */
  action: string;
  /** The call's arguments as proposed (a reviewed tool's); see {@link step}. */
  args?: Record<string, unknown>;
  /**
   * How many steps were carried out when it was answered: for an accepted or edited call, the
   * step that carries it out (once the email is done and an accepted step holds the same
   * arguments, they are kept there only); for feedback, where it stands in the agent's history.
   * A finished email keeps it for accepted calls only.
   */
  step?: number;
  answer: HumanResponse;
  /** When the interrupt was raised. */
  createdAt: number;
  answeredAt: number;
  /** The memory version the answer produced, if it updated one. */
  memory?: { namespace: string; version: number; summary: string };
}

/** A failed email, as {@link EmailAssistant.failed} lists it. */
export interface FailedEmail {
  emailId: string;
  from: string;
  subject: string;
  /** When it failed (ms). */
  failedAt: number;
  /** Why: a `TROUPE_*` code and a message a person can act on. */
  error: { code: string; message: string };
}

/** An interrupt in the inbox: the Agent Inbox request and, once given, the human's answer. */
export interface InboxItem {
  id: string;
  emailId: string;
  request: InterruptRequest;
  status: 'pending' | 'answered';
  answer?: HumanResponse;
  createdAt: number;
  answeredAt?: number;
  /** The memory version the answer produced, if it updated one. */
  memory?: { namespace: string; version: number; summary: string };
}
