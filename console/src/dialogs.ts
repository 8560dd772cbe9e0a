import { ApiProblem, idempotencyKey } from './api.js';
import { h } from './dom.js';

/**
 * A change confirmed in a modal dialog (native <dialog>: focus kept inside, Escape cancels). The
 * Idempotency-Key is drawn when the dialog opens, so pressing the button twice, or retrying after
 * a network error, makes the change once.
 */
export function changeDialog(options: {
  title: string;
  fields?: Node[];
  confirm: string;
  danger?: boolean;
  run: (form: HTMLFormElement, idempotencyKey: string) => Promise<void>;
}): void {
  const key = idempotencyKey();
  const error = h('p', { class: 'error', role: 'alert' });
  const button = h(
    'button',
    { type: 'submit', class: options.danger === true ? 'danger' : 'primary' },
    options.confirm,
  );
  const cancel = h('button', { type: 'button', class: 'secondary' }, 'Cancel');
  const titleId = `dialog-${key}`;
  const form = h(
    'form',
    { method: 'dialog' },
    h('h2', { id: titleId }, options.title),
    ...(options.fields ?? []),
    error,
    h('div', { class: 'buttons' }, cancel, button),
  );
  const dialog = h('dialog', { 'aria-labelledby': titleId }, form);
  cancel.addEventListener('click', () => dialog.close());
  dialog.addEventListener('close', () => dialog.remove());
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    if (button.disabled) return;
    button.disabled = true;
    error.textContent = '';
    options
      .run(form, key)
      .then(() => dialog.close())
      .catch((problem: unknown) => {
        error.textContent = problem instanceof Error ? problem.message : String(problem);
        button.disabled = false;
        if (problem instanceof ApiProblem && problem.status === 401) dialog.close();
      });
  });
  document.body.append(dialog);
  dialog.showModal();
}

/**
 * A secret shown once: after a create or a roll, with a copy button. Closing the dialog removes it
 * from the page; the API never returns it again.
 */
export function secretDialog(title: string, secret: string, onClose: () => void): void {
  const input = h('input', {
    id: 'new-secret',
    type: 'text',
    readonly: true,
    value: secret,
    spellcheck: 'false',
    autocomplete: 'off',
    class: 'secret',
  });
  const copied = h('span', { role: 'status', class: 'copied' });
  const copy = h('button', { type: 'button', class: 'secondary' }, 'Copy');
  copy.addEventListener('click', () => {
    input.select();
    void navigator.clipboard
      ?.writeText(secret)
      .then(() => (copied.textContent = 'Copied.'))
      .catch(() => (copied.textContent = 'Select the secret and copy it.'));
  });
  const done = h('button', { type: 'submit', class: 'primary' }, 'I have stored it');
  const dialog = h(
    'dialog',
    { 'aria-labelledby': 'secret-title', class: 'secret-dialog' },
    h(
      'form',
      { method: 'dialog' },
      h('h2', { id: 'secret-title' }, title),
      h(
        'p',
        {},
        'This secret is shown now and never again. Store it where the client keeps secrets.',
      ),
      h('label', { for: 'new-secret' }, 'Secret'),
      h('div', { class: 'row' }, input, copy),
      copied,
      h('div', { class: 'buttons' }, done),
    ),
  );
  dialog.addEventListener('close', () => {
    input.value = '';
    dialog.remove();
    onClose();
  });
  document.body.append(dialog);
  dialog.showModal();
  input.select();
}

/** A labelled control: every input of the console has a label a screen reader reads. */
export function field(label: string, control: HTMLElement, hint?: string): HTMLElement {
  const hintId = hint === undefined ? undefined : `${control.id}-hint`;
  if (hintId !== undefined) control.setAttribute('aria-describedby', hintId);
  return h(
    'div',
    { class: 'field' },
    h('label', { for: control.id }, label),
    control,
    hint === undefined ? null : h('p', { id: hintId, class: 'hint' }, hint),
  );
}

export const PLANS = ['free', 'pro', 'business', 'enterprise'] as const;

/** Plan and, for enterprise, its agreed limits: the fields of create and set-plan. */
export function planFields(
  prefix: string,
  current?: { plan: string; perMinute?: number; perDay?: number },
) {
  const plan = h(
    'select',
    { id: `${prefix}-plan`, name: 'plan' },
    ...PLANS.map((p) => h('option', { value: p, selected: p === (current?.plan ?? 'free') }, p)),
  );
  const perMinute = h('input', {
    id: `${prefix}-per-minute`,
    name: 'perMinute',
    type: 'number',
    min: 1,
    value: current?.perMinute,
  });
  const perDay = h('input', {
    id: `${prefix}-per-day`,
    name: 'perDay',
    type: 'number',
    min: 1,
    value: current?.perDay,
  });
  const custom = h(
    'fieldset',
    { class: 'custom' },
    h('legend', {}, 'Enterprise limits'),
    field('Requests per minute', perMinute),
    field('Requests per day', perDay),
  );
  const sync = () => {
    custom.hidden = plan.value !== 'enterprise';
    perMinute.required = perDay.required = plan.value === 'enterprise';
  };
  plan.addEventListener('change', sync);
  sync();
  return {
    nodes: [field('Plan', plan), custom],
    value(): { plan: (typeof PLANS)[number]; perMinute?: number; perDay?: number } {
      const chosen = PLANS.find((p) => p === plan.value) ?? 'free';
      return chosen === 'enterprise'
        ? { plan: chosen, perMinute: Number(perMinute.value), perDay: Number(perDay.value) }
        : { plan: chosen };
    },
  };
}

export const SCOPES = ['pets:read', 'pets:write'] as const;
type Scope = (typeof SCOPES)[number];

const SCOPE_HINTS: Record<Scope, string> = {
  'pets:read': 'list and read pets',
  'pets:write': 'add pets',
};

/**
 * The scopes of create and set-scopes: one checkbox each, at least one ticked. The value is the
 * comma list the admin API takes (its validator reads no arrays).
 */
export function scopeFields(prefix: string, current: readonly string[] = SCOPES) {
  const boxes = SCOPES.map((scope) => {
    const id = `${prefix}-scope-${scope.replace(':', '-')}`;
    const box = h('input', {
      id,
      type: 'checkbox',
      name: 'scopes',
      value: scope,
      checked: current.includes(scope),
    });
    return {
      scope,
      box,
      node: h(
        'div',
        { class: 'check' },
        box,
        h('label', { for: id }, h('code', { class: 'scope' }, scope), ` (${SCOPE_HINTS[scope]})`),
      ),
    };
  });
  const hintId = `${prefix}-scopes-hint`;
  const group = h(
    'fieldset',
    { class: 'scopes', 'aria-describedby': hintId },
    h('legend', {}, 'Scopes'),
    ...boxes.map((b) => b.node),
    h(
      'p',
      { id: hintId, class: 'hint' },
      'At least one. A request outside them gets 403 insufficient_scope.',
    ),
  );
  return {
    nodes: [group],
    /** The comma list, or an error the dialog shows when none is ticked. */
    value(): string {
      const chosen = boxes.filter((b) => b.box.checked).map((b) => b.scope);
      if (chosen.length === 0) throw new Error('Choose at least one scope.');
      return chosen.join(',');
    },
  };
}
