import type { InboxItem } from '../actors/email/emailRecord.js';
import { responseToolSchemas } from '../email/responseTools.js';
import { type ToolField, toolFields } from '../email/toolFields.js';
import type { EditField, StudioInterrupt } from './studioState.js';

/** Text fields that may be longer than this get a multi-line box. */
const MULTILINE_OVER = 1_000;

/** A schema field as the studio's edit form shows it. */
function editField(field: ToolField): EditField {
  const base = { name: field.name, label: field.label, required: field.required, value: field.value ?? null };
  switch (field.kind) {
    case 'text': {
      const long =
        (field.maxLength ?? Number.POSITIVE_INFINITY) > MULTILINE_OVER ||
        (typeof field.value === 'string' && field.value.includes('\n'));
      return { ...base, type: long ? 'text' : 'string' };
    }
    case 'number':
      return { ...base, type: 'number' };
    case 'list':
      return { ...base, type: 'string[]' };
    case 'boolean':
      return { ...base, type: 'boolean' };
    case 'enum':
      return { ...base, type: 'enum', options: field.options ?? [] };
  }
}

/**
 * A pending interrupt as the studio's inbox shows it: exactly what it allows, and for an editable
 * tool call the form fields from the tool's schema (the same reading as the Discord edit modal).
 */
export function studioInterrupt(item: InboxItem): StudioInterrupt {
  const { action_request: call, config, description } = item.request;
  const schema = responseToolSchemas[call.action as keyof typeof responseToolSchemas];
  return {
    id: item.id,
    emailId: item.emailId,
    createdAt: item.createdAt,
    action: call.action,
    description,
    allow: {
      ignore: config.allow_ignore,
      respond: config.allow_respond,
      edit: config.allow_edit,
      accept: config.allow_accept,
    },
    args: { ...call.args },
    fields: config.allow_edit && schema ? toolFields(schema, call.args).map(editField) : [],
  };
}
