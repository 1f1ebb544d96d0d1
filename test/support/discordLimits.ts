/**
 * Discord's form limits, as the fake Discord enforces them: what Discord refuses with HTTP 400
 * `{"code":50035,"message":"Invalid Form Body","errors":{...}}`, the errors nested by path as
 * Discord nests them (`{"embeds":{"0":{"title":{"_errors":[{code,message}]}}}}`). Lengths count
 * code points, as Discord does. Covered: message content, embeds (each part and the 6,000-character
 * total), components (action rows, buttons, select menus), modals, webhook usernames and
 * autocomplete choices.
 */

/** One refusal of a field. */
export interface FieldError {
  code: string;
  message: string;
}

/** Discord's nested errors object: keys are field names or array indexes, leaves `_errors`. */
export interface FormErrors {
  [key: string]: FormErrors | FieldError[];
}

/** The limits, named as Discord's documentation gives them. */
export const DISCORD_LIMITS = {
  content: 2_000,
  embeds: 10,
  embedTotal: 6_000,
  embedTitle: 256,
  embedDescription: 4_096,
  embedFields: 25,
  embedFieldName: 256,
  embedFieldValue: 1_024,
  embedFooter: 2_048,
  embedAuthor: 256,
  username: 80,
  actionRows: 5,
  rowComponents: 5,
  buttonLabel: 80,
  customId: 100,
  selectOptions: 25,
  selectPlaceholder: 150,
  selectOption: 100,
  modalTitle: 45,
  modalComponents: 5,
  textInputLabel: 45,
  labelDescription: 100,
  textInputValue: 4_000,
  textInputPlaceholder: 100,
  choices: 25,
  choiceName: 100,
} as const;

const length = (text: string) => [...text].length;

/** Collects refusals by path, then gives Discord's nested object (or nothing when all is well). */
class Problems {
  readonly root: FormErrors = {};
  private count = 0;

  add(path: (string | number)[], error: FieldError): void {
    let node = this.root;
    for (const key of path) {
      const next = (node[String(key)] ?? {}) as FormErrors;
      node[String(key)] = next;
      node = next;
    }
    const list = (node._errors ?? []) as FieldError[];
    list.push(error);
    node._errors = list;
    this.count += 1;
  }

  maxLength(path: (string | number)[], value: unknown, max: number): void {
    if (typeof value === 'string' && length(value) > max)
      this.add(path, { code: 'BASE_TYPE_MAX_LENGTH', message: `Must be ${max} or fewer in length.` });
  }

  between(path: (string | number)[], value: unknown, min: number, max: number): void {
    if (typeof value !== 'string') return;
    const n = length(value);
    if (n < min || n > max)
      this.add(path, {
        code: 'BASE_TYPE_BAD_LENGTH',
        message: `Must be between ${min} and ${max} in length.`,
      });
  }

  maxItems(path: (string | number)[], value: unknown, max: number): void {
    if (Array.isArray(value) && value.length > max)
      this.add(path, { code: 'BASE_TYPE_MAX_LENGTH', message: `Must be ${max} or fewer in length.` });
  }

  result(): FormErrors | undefined {
    return this.count > 0 ? this.root : undefined;
  }
}

type Json = Record<string, unknown>;
const asObject = (value: unknown): Json => (value && typeof value === 'object' ? (value as Json) : {});
const asArray = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);
const text = (value: unknown) => (typeof value === 'string' ? value : '');

/** The characters of one embed Discord counts toward the 6,000 of a message. */
export function embedSize(embed: unknown): number {
  const e = asObject(embed);
  let size = length(text(e.title)) + length(text(e.description));
  size += length(text(asObject(e.footer).text)) + length(text(asObject(e.author).name));
  for (const field of asArray(e.fields)) {
    const f = asObject(field);
    size += length(text(f.name)) + length(text(f.value));
  }
  return size;
}

function checkEmbeds(problems: Problems, embeds: unknown): void {
  const { embeds: maxEmbeds } = DISCORD_LIMITS;
  problems.maxItems(['embeds'], embeds, maxEmbeds);
  const list = asArray(embeds);
  list.forEach((embed, i) => {
    const e = asObject(embed);
    problems.maxLength(['embeds', i, 'title'], e.title, DISCORD_LIMITS.embedTitle);
    problems.maxLength(['embeds', i, 'description'], e.description, DISCORD_LIMITS.embedDescription);
    problems.maxLength(['embeds', i, 'footer', 'text'], asObject(e.footer).text, DISCORD_LIMITS.embedFooter);
    problems.maxLength(['embeds', i, 'author', 'name'], asObject(e.author).name, DISCORD_LIMITS.embedAuthor);
    problems.maxItems(['embeds', i, 'fields'], e.fields, DISCORD_LIMITS.embedFields);
    asArray(e.fields).forEach((field, j) => {
      const f = asObject(field);
      problems.maxLength(['embeds', i, 'fields', j, 'name'], f.name, DISCORD_LIMITS.embedFieldName);
      problems.maxLength(['embeds', i, 'fields', j, 'value'], f.value, DISCORD_LIMITS.embedFieldValue);
    });
  });
  const total = list.reduce<number>((sum, e) => sum + embedSize(e), 0);
  if (total > DISCORD_LIMITS.embedTotal)
    problems.add(['embeds'], {
      code: 'MAX_EMBED_SIZE_EXCEEDED',
      message: `Embed size exceeds maximum size of ${DISCORD_LIMITS.embedTotal}`,
    });
}

function checkSelect(problems: Problems, path: (string | number)[], select: Json): void {
  problems.maxLength([...path, 'placeholder'], select.placeholder, DISCORD_LIMITS.selectPlaceholder);
  problems.maxItems([...path, 'options'], select.options, DISCORD_LIMITS.selectOptions);
  asArray(select.options).forEach((option, k) => {
    const o = asObject(option);
    for (const key of ['label', 'value', 'description'] as const)
      problems.maxLength([...path, 'options', k, key], o[key], DISCORD_LIMITS.selectOption);
  });
}

function checkComponents(problems: Problems, components: unknown): void {
  problems.maxItems(['components'], components, DISCORD_LIMITS.actionRows);
  asArray(components).forEach((row, i) => {
    const r = asObject(row);
    if (r.type !== 1) return;
    const children = asArray(r.components);
    const selects = children.filter((c) => [3, 5, 6, 7, 8].includes(asObject(c).type as number));
    // A row holds up to five buttons, or one select menu.
    const max = selects.length > 0 ? 1 : DISCORD_LIMITS.rowComponents;
    if (children.length < 1 || children.length > max)
      problems.add(['components', i, 'components'], {
        code: 'BASE_TYPE_BAD_LENGTH',
        message: `Must be between 1 and ${max} in length.`,
      });
    children.forEach((child, j) => {
      const c = asObject(child);
      const path = ['components', i, 'components', j];
      problems.maxLength([...path, 'custom_id'], c.custom_id, DISCORD_LIMITS.customId);
      if (c.type === 2) problems.maxLength([...path, 'label'], c.label, DISCORD_LIMITS.buttonLabel);
      else checkSelect(problems, path, c);
    });
  });
}

/**
 * What Discord refuses in a message body (create, edit, webhook execute, interaction reply or
 * follow-up): content, embeds, components, and a webhook's `username`.
 */
export function messageProblems(body: unknown): FormErrors | undefined {
  const b = asObject(body);
  const problems = new Problems();
  problems.maxLength(['content'], b.content, DISCORD_LIMITS.content);
  if (b.embeds !== undefined && b.embeds !== null) checkEmbeds(problems, b.embeds);
  if (b.components !== undefined && b.components !== null) checkComponents(problems, b.components);
  if (b.username !== undefined) problems.between(['username'], b.username, 1, DISCORD_LIMITS.username);
  return problems.result();
}

/** What Discord refuses in a modal (interaction callback type 9). */
export function modalProblems(data: unknown): FormErrors | undefined {
  const d = asObject(data);
  const problems = new Problems();
  problems.between(['title'], d.title, 1, DISCORD_LIMITS.modalTitle);
  problems.maxLength(['custom_id'], d.custom_id, DISCORD_LIMITS.customId);
  const components = asArray(d.components);
  if (components.length < 1 || components.length > DISCORD_LIMITS.modalComponents)
    problems.add(['components'], {
      code: 'BASE_TYPE_BAD_LENGTH',
      message: `Must be between 1 and ${DISCORD_LIMITS.modalComponents} in length.`,
    });
  components.forEach((entry, i) => {
    const e = asObject(entry);
    // A label (type 18) around one component, or a legacy action row around one text input.
    const inner: [(string | number)[], Json][] =
      e.type === 18
        ? [[['components', i, 'component'], asObject(e.component)]]
        : asArray(e.components).map((c, j) => [['components', i, 'components', j], asObject(c)]);
    if (e.type === 18) {
      problems.between(['components', i, 'label'], e.label, 1, DISCORD_LIMITS.textInputLabel);
      problems.maxLength(['components', i, 'description'], e.description, DISCORD_LIMITS.labelDescription);
    }
    for (const [path, c] of inner) {
      problems.maxLength([...path, 'custom_id'], c.custom_id, DISCORD_LIMITS.customId);
      if (c.type === 4) {
        problems.maxLength([...path, 'label'], c.label, DISCORD_LIMITS.textInputLabel);
        problems.maxLength([...path, 'value'], c.value, DISCORD_LIMITS.textInputValue);
        problems.maxLength([...path, 'placeholder'], c.placeholder, DISCORD_LIMITS.textInputPlaceholder);
        const max = c.max_length;
        if (typeof max === 'number' && (max < 1 || max > DISCORD_LIMITS.textInputValue))
          problems.add([...path, 'max_length'], {
            code: 'NUMBER_TYPE_MAX',
            message: `int value should be less than or equal to ${DISCORD_LIMITS.textInputValue}.`,
          });
      } else checkSelect(problems, path, c);
    }
  });
  return problems.result();
}

/** What Discord refuses in an autocomplete result (interaction callback type 8). */
export function choicesProblems(data: unknown): FormErrors | undefined {
  const problems = new Problems();
  const choices = asObject(data).choices;
  problems.maxItems(['choices'], choices, DISCORD_LIMITS.choices);
  asArray(choices).forEach((choice, i) => {
    const c = asObject(choice);
    problems.between(['choices', i, 'name'], c.name, 1, DISCORD_LIMITS.choiceName);
    if (typeof c.value === 'string')
      problems.maxLength(['choices', i, 'value'], c.value, DISCORD_LIMITS.choiceName);
  });
  return problems.result();
}

/** What Discord refuses in an interaction callback, by its type. */
export function callbackProblems(payload: unknown): FormErrors | undefined {
  const p = asObject(payload);
  const data = asObject(p.data);
  const errors =
    p.type === 9
      ? modalProblems(data)
      : p.type === 8
        ? choicesProblems(data)
        : p.type === 4 || p.type === 7
          ? messageProblems(data)
          : undefined;
  return errors ? { data: errors } : undefined;
}

/** Discord's answer to a refused form: status 400 and this body. */
export function invalidFormBody(errors: FormErrors): { code: 50035; message: string; errors: FormErrors } {
  return { code: 50035, message: 'Invalid Form Body', errors };
}
