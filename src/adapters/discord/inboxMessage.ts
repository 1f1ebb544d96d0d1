import {
  type APIActionRowComponent,
  type APIButtonComponent,
  type APIEmbed,
  type APIEmbedField,
  ButtonStyle,
  ComponentType,
} from 'discord.js';
import { clipText } from '../../delivery/clipText.js';
import { neutralizeMentions } from '../../delivery/neutralizeMentions.js';
import { type InterruptConfig, NOTIFY_ACTION } from '../../email/agentInbox.js';
import { fitEmbed } from './embedFit.js';
import type { InboxEmail, InboxEntry } from './inboxAssistant.js';

/** What a button of an interrupt's message does. */
export type InboxAction = 'accept' | 'edit' | 'respond' | 'ignore';

type CustomIdStyle = ButtonStyle.Primary | ButtonStyle.Secondary | ButtonStyle.Success | ButtonStyle.Danger;

const BUTTONS: readonly {
  action: InboxAction;
  allow: keyof InterruptConfig;
  label: string;
  style: CustomIdStyle;
}[] = [
  { action: 'accept', allow: 'allow_accept', label: 'Accept', style: ButtonStyle.Success },
  { action: 'edit', allow: 'allow_edit', label: 'Edit', style: ButtonStyle.Primary },
  { action: 'respond', allow: 'allow_respond', label: 'Respond', style: ButtonStyle.Secondary },
  { action: 'ignore', allow: 'allow_ignore', label: 'Ignore', style: ButtonStyle.Danger },
];

const PREFIX = 'inbox:';
const PENDING_COLOUR = 0x5865f2;
const DONE_COLOUR = 0x57f287;
const IGNORED_COLOUR = 0x99aab5;

/** A button's or modal's custom id: the action and the interrupt (its id, or a reference to it). */
export function customIdOf(action: InboxAction, ref: string): string {
  return `${PREFIX}${action}:${ref}`;
}

/** The action and interrupt reference of one of the inbox's custom ids, or `undefined`. */
export function parseCustomId(customId: string): { action: InboxAction; ref: string } | undefined {
  const match = /^inbox:(accept|edit|respond|ignore):(.+)$/su.exec(customId);
  return match ? { action: match[1] as InboxAction, ref: match[2] as string } : undefined;
}

/** The longest interrupt id a custom id carries as it is (Discord allows 100 characters). */
export const MAX_CARRIED_ID = 100 - `${PREFIX}respond:`.length;

/** The message for a pending interrupt: the email, the proposed call, and a button per allowed answer. */
export function pendingMessage(
  item: InboxEntry,
  ref: string,
): { embeds: APIEmbed[]; components: APIActionRowComponent<APIButtonComponent>[] } {
  return {
    embeds: [fitEmbed(embedOf(item, PENDING_COLOUR), fitOf(item))],
    components: buttonsOf(item, ref),
  };
}

/**
 * The message for a pending interrupt Discord refused in full (its text broke a limit the fitting
 * did not foresee): the title, a pointer to the whole interrupt, and the same buttons.
 */
export function reducedPendingMessage(
  item: InboxEntry,
  ref: string,
): { embeds: APIEmbed[]; components: APIActionRowComponent<APIButtonComponent>[] } {
  return { embeds: [reducedEmbed(item, PENDING_COLOUR)], components: buttonsOf(item, ref) };
}

/** The answered message in the reduced form: the title, what was done (short), the pointer. */
export function reducedAnsweredMessage(
  item: InboxEntry,
  outcome: string,
): { embeds: APIEmbed[]; components: never[] } {
  const embed = reducedEmbed(item, item.answer?.type === 'ignore' ? IGNORED_COLOUR : DONE_COLOUR);
  embed.fields = [{ name: 'Answered', value: clipText(outcome, 500) }];
  return { embeds: [embed], components: [] };
}

function buttonsOf(item: InboxEntry, ref: string): APIActionRowComponent<APIButtonComponent>[] {
  const buttons: APIButtonComponent[] = BUTTONS.filter((b) => item.request.config[b.allow]).map((b) => ({
    type: ComponentType.Button,
    style: b.style,
    label: b.label,
    custom_id: customIdOf(b.action, ref),
  }));
  return buttons.length > 0 ? [{ type: ComponentType.ActionRow, components: buttons }] : [];
}

/** The command that shows an interrupt whole. */
function showCommand(item: InboxEntry): string {
  return `\`troupe inbox show ${clipText(item.id, 200)}\``;
}

/** Where a person reads an interrupt whole when its message had to be clipped. */
export function inboxPointer(item: InboxEntry): string {
  return `Clipped to fit Discord; the whole interrupt: ${showCommand(item)}`;
}

const fitOf = (item: InboxEntry) => ({ pointer: inboxPointer(item), descriptionMax: 3_000 });

function reducedEmbed(item: InboxEntry, colour: number): APIEmbed {
  const full = embedOf(item, colour);
  return {
    title: clipText(full.title ?? '', 200),
    description: `Too long to show on Discord; read it whole with ${showCommand(item)}.`,
    color: colour,
    ...(full.footer ? { footer: full.footer } : {}),
  };
}

/** The message once the interrupt is answered: what was done, and no buttons. */
export function answeredMessage(
  item: InboxEntry,
  outcome: string,
): { embeds: APIEmbed[]; components: never[] } {
  const embed = embedOf(item, item.answer?.type === 'ignore' ? IGNORED_COLOUR : DONE_COLOUR);
  embed.fields = [...(embed.fields ?? []), { name: 'Answered', value: clipText(outcome, 1024) }];
  return { embeds: [fitEmbed(embed, fitOf(item))], components: [] };
}

/**
 * What an answer did, for people: who answered how, what was sent or booked (from the email's
 * record), and the preferences version it taught.
 */
export function describeAnswer(item: InboxEntry, record: InboxEmail | undefined, by?: string): string {
  const type = item.answer?.type;
  const who = by ? ` by <@${by}>` : ' elsewhere';
  const lines: string[] = [];
  const action = item.request.action_request.action;
  const done = [...(record?.steps ?? [])].reverse().find((s) => s.call.tool === action);
  if (type === 'accept' || type === 'edit') {
    lines.push(`${type === 'accept' ? '✅ Accepted' : '✏️ Edited'}${who}.`);
    if (done) lines.push(carriedOut(done.call));
  } else if (type === 'response') {
    const feedback = typeof item.answer?.args === 'string' ? item.answer.args : '';
    lines.push(`💬 Answered with feedback${who}: “${clipText(oneLine(feedback), 300)}”`);
    if (action === 'Question') lines.push('The assistant goes on with your answer.');
    else if (record?.interruptId && record.interruptId !== item.id)
      lines.push('The assistant drafted again with it: see the next message.');
    else lines.push('The assistant goes on with it.');
  } else if (type === 'ignore') {
    lines.push(
      `🚫 Ignored${who}: ${action === NOTIFY_ACTION ? 'the email is closed' : 'nothing was sent; the email is closed'}.`,
    );
  } else {
    lines.push(`Answered${who}.`);
  }
  if (item.memory)
    lines.push(
      `Learned (${item.memory.namespace}, version ${item.memory.version}): ${clipText(oneLine(item.memory.summary), 300)}`,
    );
  return lines.join('\n');
}

function carriedOut(call: { tool: string; args: unknown }): string {
  const args = (call.args ?? {}) as Record<string, unknown>;
  if (call.tool === 'send_email_tool')
    return `Sent to ${oneLine(String(args.to))}: “${oneLine(String(args.subject))}”.`;
  if (call.tool === 'schedule_meeting_tool')
    return `Booked “${oneLine(String(args.subject))}” on ${String(args.preferred_day)} at ${String(args.start_time)} (${String(args.time_zone)}, ${String(args.duration_minutes)} min) with ${(Array.isArray(args.attendees) ? args.attendees : []).join(', ')}.`;
  return `${call.tool} was carried out.`;
}

function embedOf(item: InboxEntry, colour: number): APIEmbed {
  const { action, args } = item.request.action_request;
  const [email = ''] = item.request.description.split(/\n---(?:\n|$)/u);
  const subject = /^## Email: (.*)$/mu.exec(email)?.[1] ?? '(no subject)';
  const title =
    action === NOTIFY_ACTION
      ? `📬 For your attention: ${subject}`
      : action === 'send_email_tool'
        ? `✉️ A reply to review: ${subject}`
        : action === 'schedule_meeting_tool'
          ? `📅 A meeting to review: ${subject}`
          : action === 'Question'
            ? `❓ A question about: ${subject}`
            : `${action}: ${subject}`;
  const fields: APIEmbedField[] = [];
  // Each part whole here (mentions broken); fitEmbed clips to Discord's limits and the total.
  const text = (value: unknown) => neutralizeMentions(String(value ?? '')) || '—';
  if (action === 'send_email_tool') {
    fields.push(
      { name: 'To', value: text(args.to), inline: true },
      { name: 'Subject', value: text(args.subject), inline: true },
      { name: 'Content', value: text(args.content) },
    );
  } else if (action === 'schedule_meeting_tool') {
    fields.push(
      { name: 'Attendees', value: text(Array.isArray(args.attendees) ? args.attendees.join(', ') : '') },
      { name: 'Subject', value: text(args.subject), inline: true },
      {
        name: 'When',
        value: text(
          `${String(args.preferred_day)} at ${String(args.start_time)} (${String(args.time_zone)})`,
        ),
        inline: true,
      },
      { name: 'Duration', value: text(`${String(args.duration_minutes)} min`), inline: true },
    );
  } else if (action === 'Question') {
    fields.push({ name: 'Question', value: text(args.content) });
  }
  return {
    title: oneLine(title),
    // The email's own text: untrusted, so mentions in it are broken (embeds do not ping, but a
    // copy pasted elsewhere would).
    description: neutralizeMentions(email.replace(/^## Email: .*\n*/mu, '').trim()) || '—',
    color: colour,
    fields,
    footer: { text: `Interrupt ${clipText(item.id, 200)}` },
  };
}

/** One line of outside text (an email's, a model's, a person's), mentions broken. */
function oneLine(text: string): string {
  return neutralizeMentions(text.replace(/\s+/gu, ' ').trim());
}
