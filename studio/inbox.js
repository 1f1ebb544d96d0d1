// @ts-check
// Inbox: the pending interrupts with exactly the answers each allows, and what the answers did.
import { byId, find, formatStateValue, formatTime, h, replaceChildren } from './dom.js';

/** @typedef {import('./state.js').EditField} EditField */
/** @typedef {import('./state.js').StudioAnswer} StudioAnswer */
/** @typedef {import('./state.js').StudioApi} StudioApi */
/** @typedef {import('./state.js').StudioInterrupt} StudioInterrupt */
/** @typedef {import('./state.js').StudioState} StudioState */

/** A value from a datetime field as the `datetime-local` input shows it (local time, to the minute). */
function toLocalInput(value) {
  if (typeof value !== 'string' || value === '') return '';
  if (/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}$/u.test(value)) return value;
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) return '';
  const pad = (n) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}`;
}

/** The input for one edit field, typed by the field's schema type. */
/** @param {EditField} field @param {string} inputId */
function fieldInput(field, inputId) {
  const common = { id: inputId, name: field.name, required: field.required || undefined };
  switch (field.type) {
    case 'text': {
      const text = typeof field.value === 'string' ? field.value : '';
      // As tall as the proposed text, within reason (a short value gets a small box).
      const rows = Math.min(12, Math.max(2, text.split('\n').length + 1));
      return h('textarea', { ...common, rows: String(rows) }, text);
    }
    case 'number':
      return h('input', {
        ...common,
        type: 'number',
        step: 'any',
        value: typeof field.value === 'number' ? field.value : '',
      });
    case 'boolean':
      return h('input', { id: inputId, name: field.name, type: 'checkbox', checked: field.value === true });
    case 'datetime':
      return h('input', { ...common, type: 'datetime-local', value: toLocalInput(field.value) });
    case 'string[]':
      return h('input', {
        ...common,
        type: 'text',
        value: Array.isArray(field.value) ? field.value.join(', ') : '',
        'aria-describedby': `${inputId}-hint`,
      });
    case 'enum':
      return h(
        'select',
        common,
        field.required ? null : h('option', { value: '' }, '—'),
        (field.options ?? []).map((option) =>
          h('option', { value: option, selected: option === field.value || undefined }, option),
        ),
      );
    default:
      return h('input', {
        ...common,
        type: 'text',
        value: typeof field.value === 'string' ? field.value : '',
      });
  }
}

/** What a field's input holds, as the tool's argument type. */
/** @param {EditField} field @param {any} input */
function fieldValue(field, input) {
  switch (field.type) {
    case 'number':
      return input.value.trim() === '' ? undefined : Number(input.value);
    case 'boolean':
      return input.checked;
    case 'datetime': {
      if (input.value === '') return undefined;
      // Keep the shape the tool proposed: an instant stays an instant (ISO in UTC).
      const wasInstant = typeof field.value === 'string' && /(Z|[+-]\d{2}:?\d{2})$/u.test(field.value);
      return wasInstant ? new Date(input.value).toISOString() : input.value;
    }
    case 'string[]':
      return input.value
        .split(/[,\n]/u)
        .map((s) => s.trim())
        .filter((s) => s !== '');
    case 'enum':
      return input.value === '' ? undefined : input.value;
    default:
      return input.value;
  }
}

/**
 * The little markdown an interrupt's description uses (headings, `**bold**`, `---`), drawn with
 * DOM nodes: every piece of text goes in as text, so nothing in an email can become markup; a
 * line escaped with a backslash is drawn as the text after it.
 */
export function markdownLines(markdown) {
  return markdown.split('\n').map((line) => {
    // A line the email's text escaped (`\# …`, `\---`) is text, never a heading or a rule.
    if (line.startsWith('\\')) return h('p', { class: 'md-line' }, line.slice(1));
    const heading = /^(#{1,6})\s+(.*)$/u.exec(line);
    if (heading) return h('p', { class: `md-heading md-h${heading[1].length}` }, heading[2]);
    if (/^\s*(-{3,}|\*{3,})\s*$/u.test(line)) return h('hr', {});
    if (line.trim() === '') return h('div', { class: 'md-gap' });
    const parts = line.split(/\*\*(.+?)\*\*/u);
    return h(
      'p',
      { class: 'md-line' },
      parts.map((part, i) => (i % 2 === 1 ? h('strong', {}, part) : part)),
    );
  });
}

/** @param {{ api: StudioApi, onUnauthorized: (error: Error) => void }} options */
export function createInboxView({ api, onUnauthorized }) {
  const pendingList = byId('interrupt-list', HTMLElement);
  const answeredList = byId('answered-list', HTMLElement);
  const badge = byId('inbox-count', HTMLElement);
  /** interrupt id → its <li>, kept across updates so a half-typed answer survives a live update. */
  /** @type {Map<string, HTMLElement>} */
  const items = new Map();

  /** @param {StudioInterrupt} interrupt @param {string | undefined} subject */
  function interruptItem(interrupt, subject) {
    const base = `interrupt-${interrupt.id.replace(/[^\w-]/gu, '_')}`;
    const headingId = `${base}-heading`;
    const status = h('p', { class: 'item-status', role: 'status' });
    const buttons = [];

    async function answer(body) {
      for (const b of buttons) b.disabled = true;
      status.textContent = 'Sending your answer…';
      status.classList.remove('error');
      try {
        const result = /** @type {{ emailState: unknown }} */ (
          await api.post(`/api/inbox/${encodeURIComponent(interrupt.id)}/answer`, body)
        );
        status.textContent = `Answered. The email is now ${formatStateValue(result?.emailState) || 'moving on'}.`;
      } catch (error) {
        if (error instanceof Error && error.name === 'UnauthorizedError') onUnauthorized(error);
        status.textContent = `Not answered: ${error instanceof Error ? error.message : String(error)}`;
        status.classList.add('error');
        for (const b of buttons) b.disabled = false;
      }
    }

    const forms = h('div', { class: 'answer-forms' });
    /** @param {HTMLElement} form */
    const showForm = (form) => {
      for (const other of forms.children)
        if (other instanceof HTMLElement) other.hidden = other !== form || !other.hidden;
      if (!form.hidden) find(form, 'input, textarea, select', HTMLElement)?.focus();
    };

    const button = (label, onclick, extra = {}) => {
      const b = h('button', { type: 'button', 'aria-describedby': headingId, onclick, ...extra }, label);
      buttons.push(b);
      return b;
    };

    const actions = h('div', { class: 'actions' });
    if (interrupt.allow.accept)
      actions.append(button('Accept', () => answer({ type: 'accept' }), { class: 'primary' }));

    if (interrupt.allow.edit) {
      const fields = interrupt.fields ?? [];
      const inputs = fields.map((field, i) => ({ field, input: fieldInput(field, `${base}-field-${i}`) }));
      const editForm = h(
        'form',
        { class: 'edit-form', hidden: true, 'aria-label': `Edit ${interrupt.action}` },
        inputs.map(({ field, input }) =>
          h(
            'div',
            { class: `field field-${field.type.replace('[]', '-list')}` },
            h(
              'label',
              { for: input.id },
              field.label,
              field.required ? h('span', { class: 'required' }, ' (required)') : null,
            ),
            input,
            field.type === 'string[]'
              ? h('small', { id: `${input.id}-hint`, class: 'hint' }, 'Separate entries with commas.')
              : null,
          ),
        ),
        h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'primary' }, 'Send edited')),
      );
      buttons.push(editForm.querySelector('button[type="submit"]'));
      editForm.addEventListener('submit', (event) => {
        event.preventDefault();
        const args = { ...(interrupt.args ?? {}) };
        for (const { field, input } of inputs) {
          const value = fieldValue(field, input);
          if (value === undefined) delete args[field.name];
          else args[field.name] = value;
        }
        answer({ type: 'edit', args });
      });
      forms.append(editForm);
      actions.append(
        button('Edit', () => showForm(editForm), {
          'aria-expanded': 'false',
          dataset: { opens: 'edit-form' },
        }),
      );
    }

    if (interrupt.allow.respond) {
      const textId = `${base}-feedback`;
      const respondForm = h(
        'form',
        { class: 'respond-form', hidden: true, 'aria-label': `Respond to ${interrupt.action}` },
        h('label', { for: textId }, 'Your feedback'),
        h('textarea', { id: textId, name: 'feedback', rows: '4', required: true }),
        h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'primary' }, 'Send feedback')),
      );
      buttons.push(respondForm.querySelector('button[type="submit"]'));
      respondForm.addEventListener('submit', (event) => {
        event.preventDefault();
        const text = find(respondForm, 'textarea[name="feedback"]', HTMLTextAreaElement)?.value.trim() ?? '';
        if (text === '') {
          status.textContent = 'Write some feedback first.';
          status.classList.add('error');
          return;
        }
        answer({ type: 'response', args: text });
      });
      forms.append(respondForm);
      actions.append(
        button('Respond', () => showForm(respondForm), {
          'aria-expanded': 'false',
          dataset: { opens: 'respond-form' },
        }),
      );
    }

    if (interrupt.allow.ignore) actions.append(button('Ignore', () => answer({ type: 'ignore' })));

    // Keep aria-expanded of Edit/Respond true to the form they open.
    const syncExpanded = () => {
      for (const b of actions.querySelectorAll('[aria-expanded]')) {
        if (!(b instanceof HTMLElement)) continue;
        const form = find(forms, `.${b.dataset.opens}`, HTMLElement);
        b.setAttribute('aria-expanded', String(Boolean(form && !form.hidden)));
      }
    };
    actions.addEventListener('click', syncExpanded);

    return h(
      'li',
      { class: 'interrupt', dataset: { interruptId: interrupt.id, emailId: interrupt.emailId } },
      h(
        'article',
        { 'aria-labelledby': headingId },
        h(
          'h3',
          { id: headingId },
          interrupt.action,
          h('span', { class: 'muted' }, subject ? ` · “${subject}”` : '', ` · email ${interrupt.emailId}`),
        ),
        h('p', { class: 'muted' }, `waiting since ${formatTime(interrupt.createdAt)}`),
        h(
          'div',
          { class: 'description', tabindex: '0', 'aria-label': 'The email and the proposal' },
          markdownLines(interrupt.description),
        ),
        actions,
        forms,
        status,
      ),
    );
  }

  /** @param {StudioAnswer} a */
  function answeredItem(a) {
    return h(
      'li',
      { class: 'answered', dataset: { answeredInterrupt: a.interruptId, emailId: a.emailId } },
      h('span', { class: `tag answer-${a.type}` }, a.type),
      ' email ',
      h('strong', {}, a.emailId),
      ' → ',
      h('span', { class: 'email-state' }, formatStateValue(a.emailState) || 'unknown'),
      a.memory
        ? h(
            'span',
            { class: 'memory' },
            ' · memory ',
            h('code', {}, a.memory.namespace),
            ` version ${a.memory.version}`,
            a.memory.summary ? `: ${a.memory.summary}` : '',
          )
        : null,
      h('time', { class: 'muted' }, ` ${formatTime(a.at)}`),
    );
  }

  /** @param {StudioState} state */
  function update(state) {
    const pending = state.interrupts;
    const ids = new Set(pending.map((i) => i.id));
    for (const [id, li] of items) {
      if (!ids.has(id)) {
        li.remove();
        items.delete(id);
      }
    }
    pendingList.querySelector('.empty')?.remove();
    // Existing items stay where they are (moving a node would drop the focus inside it); new ones go in order.
    let cursor = pendingList.firstElementChild;
    for (const interrupt of pending) {
      let li = items.get(interrupt.id);
      if (!li) {
        const email = state.actors.find((a) => a.id === `email:${interrupt.emailId}`);
        li = interruptItem(interrupt, email?.label);
        items.set(interrupt.id, li);
      }
      if (cursor === li) cursor = li.nextElementSibling;
      else pendingList.insertBefore(li, cursor);
    }
    if (pending.length === 0)
      pendingList.append(h('li', { class: 'empty hint' }, 'Nothing is waiting for you.'));
    badge.textContent = pending.length > 0 ? String(pending.length) : '';
    replaceChildren(
      answeredList,
      state.answered.length === 0
        ? h('li', { class: 'hint' }, 'No answers yet.')
        : state.answered.map(answeredItem),
    );
  }

  return { update };
}
