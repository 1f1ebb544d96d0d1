import { z } from 'zod';

/**
 * One field of a tool's arguments as a form shows it, read from the tool's zod schema: what the
 * Discord inbox's edit modal and the studio's edit form are both built from.
 */
export interface ToolField {
  name: string;
  /** `duration_minutes` as “Duration minutes”. */
  label: string;
  kind: 'text' | 'number' | 'list' | 'boolean' | 'enum';
  required: boolean;
  /** For text: the longest value the schema takes. */
  maxLength?: number;
  /** For numbers. */
  int?: boolean;
  min?: number;
  max?: number;
  /** For enums: the values allowed. */
  options?: string[];
  /** The proposed value, as the arguments hold it. */
  value: unknown;
}

/** The fields of a tool's schema in declaration order, with the proposed values. */
export function toolFields(schema: z.ZodObject, proposed: Record<string, unknown>): ToolField[] {
  const fields: ToolField[] = [];
  for (const [name, raw] of Object.entries(schema.shape)) {
    const field = unwrap(raw as z.ZodType);
    const base = {
      name,
      label: humanName(name),
      required: !(raw instanceof z.ZodOptional),
      value: proposed[name],
    };
    if (field instanceof z.ZodString) {
      fields.push({
        ...base,
        kind: 'text',
        ...(field.maxLength !== null ? { maxLength: field.maxLength } : {}),
      });
    } else if (field instanceof z.ZodNumber) {
      fields.push({
        ...base,
        kind: 'number',
        int: field.isInt,
        // An unbounded number reports ±Infinity: no bound to show.
        ...(Number.isFinite(field.minValue) ? { min: field.minValue as number } : {}),
        ...(Number.isFinite(field.maxValue) ? { max: field.maxValue as number } : {}),
      });
    } else if (field instanceof z.ZodArray) {
      fields.push({ ...base, kind: 'list' });
    } else if (field instanceof z.ZodBoolean) {
      fields.push({ ...base, kind: 'boolean' });
    } else if (field instanceof z.ZodEnum) {
      fields.push({ ...base, kind: 'enum', options: field.options.map(String) });
    }
  }
  return fields;
}

/** `duration_minutes` as “Duration minutes”. */
export function humanName(name: string): string {
  const words = name.replace(/_/gu, ' ').trim();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

function unwrap(schema: z.ZodType): z.ZodType {
  let inner = schema;
  while (inner instanceof z.ZodOptional || inner instanceof z.ZodDefault || inner instanceof z.ZodNullable)
    inner = inner.unwrap() as z.ZodType;
  return inner;
}
