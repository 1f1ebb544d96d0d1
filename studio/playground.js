// @ts-check
// Playground: the channel's messages with each decision's reason, a box to talk, summon and dismiss.
import { byId, find, formatTime, h, replaceChildren } from './dom.js';

/** @typedef {import('./state.js').PlaygroundAvatar} PlaygroundAvatar */
/** @typedef {import('./state.js').PlaygroundMessage} PlaygroundMessage */
/** @typedef {import('./state.js').StudioApi} StudioApi */
/** @typedef {import('./state.js').StudioState} StudioState */

const SNIPPET = 60;

const snippet = (text) => (text.length > SNIPPET ? `${text.slice(0, SNIPPET - 1)}…` : text);

/** @param {{ api: StudioApi, onUnauthorized: (error: Error) => void }} options */
export function createPlaygroundView({ api, onUnauthorized }) {
  const messageList = byId('message-list', HTMLElement);
  const avatarList = byId('avatar-list', HTMLElement);
  const form = byId('message-form', HTMLFormElement);
  const input = byId('message-text', HTMLInputElement);
  const replyBox = byId('reply-to', HTMLElement);
  const heading = byId('channel-heading', HTMLElement);
  const readOnlyNote = byId('playground-read-only', HTMLElement);
  const newAvatarForm = byId('new-avatar-form', HTMLFormElement);
  const newAvatarName = byId('new-avatar-name', HTMLInputElement);
  const newAvatarStatus = byId('new-avatar-status', HTMLElement);
  /** message id → its <li> and the message it shows (as JSON) */
  const shown = new Map();
  /** @type {StudioState | undefined} */
  let latest;
  /** @type {PlaygroundMessage | undefined} */
  let replyTo;

  const failed = (error, what) => {
    if (error?.name === 'UnauthorizedError') onUnauthorized(error);
    formStatus(`${what}: ${error.message}`, true);
  };

  const status = h('p', { class: 'item-status', role: 'status' });
  form.append(status);
  function formStatus(text, isError = false) {
    status.textContent = text;
    status.classList.toggle('error', isError);
  }

  function setReplyTo(message) {
    replyTo = message;
    if (!message) {
      replyBox.hidden = true;
      replyBox.replaceChildren();
      return;
    }
    replaceChildren(
      replyBox,
      `Replying to ${message.author.name}: “${snippet(message.text)}” `,
      h('button', { type: 'button', class: 'small', onclick: () => setReplyTo(undefined) }, 'Cancel reply'),
    );
    replyBox.hidden = false;
    input.focus();
  }

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const text = input.value.trim();
    if (text === '') return;
    const button = find(form, 'button[type="submit"]', HTMLButtonElement);
    if (button) button.disabled = true;
    try {
      await api.post('/api/playground/message', { text, ...(replyTo ? { replyTo: replyTo.id } : {}) });
      input.value = '';
      setReplyTo(undefined);
      formStatus('');
    } catch (error) {
      failed(error, 'Not sent');
    } finally {
      if (button) button.disabled = false;
      input.focus();
    }
  });

  // A name nobody has creates the avatar (when the runtime's creation is on), then summons it.
  newAvatarForm.addEventListener('submit', async (event) => {
    event.preventDefault();
    const name = newAvatarName.value.trim();
    if (name === '') return;
    const button = find(newAvatarForm, 'button[type="submit"]', HTMLButtonElement);
    if (button) button.disabled = true;
    newAvatarStatus.classList.remove('error');
    newAvatarStatus.textContent = `Summoning ${name}…`;
    try {
      const answer = /** @type {{ avatar: { name: string }, created: boolean }} */ (
        await api.post('/api/playground/create', { name })
      );
      const { avatar, created } = answer;
      newAvatarName.value = '';
      newAvatarStatus.textContent = `${created ? 'Created and summoned' : 'Summoned'} ${avatar.name}.`;
    } catch (caught) {
      const error = caught instanceof Error ? caught : new Error(String(caught));
      if (error.name === 'UnauthorizedError') onUnauthorized(error);
      newAvatarStatus.classList.add('error');
      newAvatarStatus.textContent = `${name} not summoned: ${error.message}`;
    } finally {
      if (button) button.disabled = false;
    }
  });

  const avatarOf = (author) => latest?.playground.avatars.find((a) => a.id === author.id);

  /** @param {PlaygroundMessage} message @param {Map<string, PlaygroundMessage>} messagesById */
  function messageItem(message, messagesById) {
    const avatar = message.author.kind === 'avatar' ? avatarOf(message.author) : undefined;
    const parent = message.replyTo ? messagesById.get(message.replyTo) : undefined;
    return h(
      'li',
      { class: `message from-${message.author.kind}`, dataset: { messageId: message.id } },
      h(
        'div',
        { class: 'message-head' },
        h('time', { class: 'muted' }, formatTime(message.at)),
        ' ',
        h(
          'strong',
          { class: 'author' },
          avatar?.emoji ? `${avatar.emoji} ${message.author.name}` : message.author.name,
        ),
        parent
          ? h('span', { class: 'reply-of muted' }, ` ↩ ${parent.author.name}: “${snippet(parent.text)}”`)
          : message.replyTo
            ? h('span', { class: 'reply-of muted' }, ' ↩ an earlier message')
            : null,
        h(
          'button',
          {
            type: 'button',
            class: 'small reply',
            'aria-label': `Reply to ${message.author.name}: ${snippet(message.text)}`,
            onclick: () => setReplyTo(message),
          },
          'Reply',
        ),
      ),
      h('p', { class: 'text' }, message.text),
      message.why
        ? h('p', { class: 'why' }, h('span', { class: 'visually-hidden' }, 'why: '), message.why)
        : null,
    );
  }

  async function presence(path, avatar, verb) {
    try {
      await api.post(path, { avatarId: avatar.id });
      formStatus(`${verb} ${avatar.name}.`);
    } catch (error) {
      failed(error, `${avatar.name} not ${verb.toLowerCase()}`);
    }
  }

  /** @param {PlaygroundAvatar} avatar */
  function avatarItem(avatar) {
    const name = avatar.emoji ? `${avatar.emoji} ${avatar.name}` : avatar.name;
    return h(
      'li',
      { class: 'avatar', dataset: { avatarId: avatar.id, present: String(avatar.present) } },
      h('span', { class: 'avatar-name' }, name),
      h(
        'span',
        { class: `tag ${avatar.present ? 'status-active' : 'status-done'}` },
        avatar.present ? 'here' : 'away',
      ),
      h(
        'span',
        { class: 'actions' },
        h(
          'button',
          {
            type: 'button',
            'aria-label': `Summon ${avatar.name}`,
            disabled: avatar.present || latest?.playground.readOnly !== undefined || undefined,
            onclick: () => presence('/api/playground/summon', avatar, 'Summoned'),
          },
          'Summon',
        ),
        h(
          'button',
          {
            type: 'button',
            'aria-label': `Dismiss ${avatar.name}`,
            disabled: !avatar.present || latest?.playground.readOnly !== undefined || undefined,
            onclick: () => presence('/api/playground/dismiss', avatar, 'Dismissed'),
          },
          'Dismiss',
        ),
      ),
    );
  }

  /** @param {StudioState} state */
  function update(state) {
    latest = state;
    const { channel, avatars, messages } = state.playground;
    heading.textContent = `Channel ${channel.platform}:${channel.id}`;
    const { readOnly } = state.playground;
    form.hidden = readOnly !== undefined;
    newAvatarForm.hidden = readOnly !== undefined;
    readOnlyNote.hidden = readOnly === undefined;
    readOnlyNote.textContent = readOnly ?? '';
    const focusedItem = document.activeElement?.closest('#avatar-list [data-avatar-id]');
    const focusedAvatar = focusedItem instanceof HTMLElement ? focusedItem.dataset.avatarId : undefined;
    const focusedLabel = document.activeElement?.getAttribute?.('aria-label');
    replaceChildren(avatarList, avatars.map(avatarItem));
    if (focusedAvatar) {
      const again = [...avatarList.querySelectorAll('button')].find(
        (b) => b.getAttribute('aria-label') === focusedLabel,
      );
      (again && !again.disabled
        ? again
        : find(
            avatarList,
            `[data-avatar-id="${CSS.escape(focusedAvatar)}"] button:not([disabled])`,
            HTMLButtonElement,
          )
      )?.focus();
    }

    const byId = new Map(messages.map((m) => [m.id, m]));
    const nearBottom = messageList.scrollHeight - messageList.scrollTop - messageList.clientHeight < 40;
    for (const [id, { li }] of shown) {
      if (!byId.has(id)) {
        li.remove();
        shown.delete(id);
      }
    }
    // A message may come back with more to say (the reason for an avatar's turn arrives with its
    // delivery): it is drawn again in place; unchanged ones are left alone.
    for (const message of messages) {
      const key = JSON.stringify(message);
      const old = shown.get(message.id);
      if (old?.key === key) continue;
      const li = messageItem(message, byId);
      shown.set(message.id, { li, key });
      if (old) old.li.replaceWith(li);
      else messageList.append(li);
    }
    messageList.querySelector('.empty')?.remove();
    if (messages.length === 0)
      messageList.append(
        h('li', { class: 'empty hint' }, 'No messages yet. Say hello, or summon an avatar.'),
      );
    if (nearBottom) messageList.scrollTop = messageList.scrollHeight;
  }

  return { update };
}
