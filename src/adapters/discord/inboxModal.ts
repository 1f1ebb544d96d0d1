import { type APIModalInteractionResponseCallbackData, ComponentType, TextInputStyle } from 'discord.js';
import type { z } from 'zod';
import { humanName, toolFields } from '../../email/toolFields.js';

/** Discord's limits for a modal: five components, labels of 45 characters, values of 4,000. */
const MAX_FIELDS = 5;
const MAX_LABEL = 45;
const MAX_DESCRIPTION = 100;
const MAX_VALUE = 4_000;
/** Text fields that may be longer than this get a paragraph box. */
const PARAGRAPH_OVER = 1_000;

/** A text input of the edit modal, worked out from one field of the tool's schema. */
export interface ModalField {
  name: string;
  kind: 'text' | 'number' | 'list';
  label: string;
  description?: string;
  paragraph: boolean;
  required: boolean;
  maxLength: number;
  /** The proposed value as a person edits it (a list comma-separated). */
  value: string;
}

/** The modal's fields: the first five of the schema's (Discord allows five); the rest keep their values. */
export function editFields(schema: z.ZodObject, proposed: Record<string, unknown>): ModalField[] {
  const fields: ModalField[] = [];
  for (const field of toolFields(schema, proposed)) {
    if (fields.length === MAX_FIELDS) break;
    const { name, required, value: current } = field;
    const label = clip(field.label, MAX_LABEL);
    if (field.kind === 'text') {
      const max = Math.min(field.maxLength ?? MAX_VALUE, MAX_VALUE);
      const value = typeof current === 'string' ? current : '';
      fields.push({
        name,
        kind: 'text',
        label,
        paragraph: max > PARAGRAPH_OVER || value.includes('\n'),
        required,
        maxLength: max,
        value: value.slice(0, max),
      });
    } else if (field.kind === 'number') {
      const range =
        field.min !== undefined && field.max !== undefined ? ` from ${field.min} to ${field.max}` : '';
      fields.push({
        name,
        kind: 'number',
        label,
        description: `${field.int ? 'A whole number' : 'A number'}${range}`,
        paragraph: false,
        required,
        maxLength: 20,
        value: typeof current === 'number' ? String(current) : '',
      });
    } else if (field.kind === 'list') {
      const value = Array.isArray(current) ? current.map(String).join(', ') : '';
      fields.push({
        name,
        kind: 'list',
        label,
        description: 'Comma-separated',
        paragraph: false,
        required,
        maxLength: MAX_VALUE,
        value: value.slice(0, MAX_VALUE),
      });
    }
  }
  return fields;
}

/**
 * A modal (Discord's JSON) with one labelled text input per field, each pre-filled with its
 * current value: typed fields, never one JSON string.
 */
export function modalOf(
  customId: string,
  title: string,
  fields: readonly ModalField[],
): APIModalInteractionResponseCallbackData {
  return {
    custom_id: customId,
    title: clip(title, MAX_LABEL),
    components: fields.map((field) => ({
      type: ComponentType.Label,
      label: field.label,
      ...(field.description ? { description: clip(field.description, MAX_DESCRIPTION) } : {}),
      component: {
        type: ComponentType.TextInput,
        custom_id: field.name,
        style: field.paragraph ? TextInputStyle.Paragraph : TextInputStyle.Short,
        required: field.required,
        max_length: field.maxLength,
        ...(field.value !== '' ? { value: field.value } : {}),
      },
    })),
  };
}

/**
 * The arguments a submitted modal means: each field's text read as its schema type (a list split
 * at commas, a number when it reads as one), over the proposed arguments (fields the modal did not
 * show keep their values), validated against the schema. A failure names each field (its label and
 * its name), what is wrong, and what was typed.
 */
export function argsFromModal(
  schema: z.ZodObject,
  proposed: Record<string, unknown>,
  values: ReadonlyMap<string, string>,
): { ok: true; args: Record<string, unknown> } | { ok: false; problems: string[] } {
  const fields = editFields(schema, proposed);
  const edited: Record<string, unknown> = { ...proposed };
  for (const field of fields) {
    const typed = values.get(field.name);
    if (typed === undefined) continue;
    if (field.kind === 'list')
      edited[field.name] = typed
        .split(/[,\n]/u)
        .map((s) => s.trim())
        .filter((s) => s !== '');
    else if (field.kind === 'number')
      edited[field.name] = /^\s*-?\d+(\.\d+)?\s*$/u.test(typed) ? Number(typed) : typed;
    else edited[field.name] = typed;
  }
  const parsed = schema.safeParse(edited);
  if (parsed.success) return { ok: true, args: parsed.data as Record<string, unknown> };
  const problems = parsed.error.issues.map((issue) => {
    const name = String(issue.path[0] ?? '');
    const field = fields.find((f) => f.name === name);
    const typed = values.get(name);
    const what =
      field?.kind === 'number' && typeof edited[name] === 'string'
        ? 'is not a number'
        : issue.message.replace(/^Invalid input: /u, '');
    const shown = typed !== undefined ? ` (you wrote “${clip(typed, 80)}”)` : '';
    return `**${field?.label ?? humanName(name)}** (\`${name}\`): ${what}${shown}`;
  });
  return { ok: false, problems };
}

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
