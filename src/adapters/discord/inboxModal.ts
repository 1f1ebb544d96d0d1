import { type APIModalInteractionResponseCallbackData, ComponentType, TextInputStyle } from 'discord.js';
import { z } from 'zod';

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
  for (const [name, raw] of Object.entries(schema.shape)) {
    if (fields.length === MAX_FIELDS) break;
    const field = unwrap(raw as z.ZodType);
    const label = clip(humanName(name), MAX_LABEL);
    const required = !(raw instanceof z.ZodOptional);
    const current = proposed[name];
    if (field instanceof z.ZodString) {
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
    } else if (field instanceof z.ZodNumber) {
      const range =
        field.minValue !== null && field.maxValue !== null
          ? ` from ${field.minValue} to ${field.maxValue}`
          : '';
      fields.push({
        name,
        kind: 'number',
        label,
        description: `${field.isInt ? 'A whole number' : 'A number'}${range}`,
        paragraph: false,
        required,
        maxLength: 20,
        value: typeof current === 'number' ? String(current) : '',
      });
    } else if (field instanceof z.ZodArray) {
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

/** `duration_minutes` as “Duration minutes”. */
function humanName(name: string): string {
  const words = name.replace(/_/gu, ' ').trim();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

function unwrap(schema: z.ZodType): z.ZodType {
  let inner = schema;
  while (inner instanceof z.ZodOptional || inner instanceof z.ZodDefault || inner instanceof z.ZodNullable)
    inner = inner.unwrap() as z.ZodType;
  return inner;
}

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
