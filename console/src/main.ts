import { answer, ApiProblem, client, onTokenRefused } from './api.js';
import { field } from './dialogs.js';
import { byId, h, replace } from './dom.js';
import { keyPage } from './key-page.js';
import { keysPage } from './keys-page.js';
import { session } from './session.js';
import './app.css';

const main = byId<HTMLElement>('main');
const notice = byId<HTMLElement>('notice');
const signOut = byId<HTMLButtonElement>('sign-out');
const navKeys = byId<HTMLAnchorElement>('nav-keys');

function say(message: string, kind: 'error' | 'info' = 'error'): void {
  replace(notice, message === '' ? null : h('p', { class: kind }, message));
}

function showSignIn(message = ''): void {
  signOut.hidden = true;
  navKeys.hidden = true;
  const token = h('input', {
    id: 'admin-token',
    name: 'token',
    type: 'password',
    autocomplete: 'off',
    required: true,
    pattern: 'pa_admin_[0-9A-Za-z]{36}',
  });
  const error = h('p', { class: 'error', role: 'alert', id: 'sign-in-error' }, message);
  const form = h(
    'form',
    { class: 'sign-in', 'aria-labelledby': 'sign-in-title' },
    h('h2', { id: 'sign-in-title' }, 'Sign in'),
    field(
      'Admin token',
      token,
      'pa_admin_ followed by 36 letters and digits, from petstore admin-tokens create. Kept in this tab only, until you sign out or close it.',
    ),
    error,
    h('button', { type: 'submit', class: 'primary' }, 'Sign in'),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    session.signIn(token.value.trim());
    error.textContent = '';
    // One cheap call proves the token before any page is drawn.
    answer(client.GET('/keys', { params: { query: { limit: 1 } } }))
      .then(() => {
        if (!location.hash.startsWith('#/keys')) location.hash = '#/keys';
        else void route();
      })
      .catch((problem: unknown) => {
        if (!(problem instanceof ApiProblem && problem.status === 401)) {
          session.signOut();
          error.textContent = problem instanceof Error ? problem.message : String(problem);
        }
      });
  });
  say('');
  replace(main, form);
  token.focus();
}

async function route(): Promise<void> {
  if (session.token() === undefined) {
    showSignIn();
    return;
  }
  signOut.hidden = false;
  navKeys.hidden = false;
  say('');
  const hash = location.hash.replace(/^#/, '') || '/keys';
  const [path = '', query = ''] = hash.split('?');
  try {
    const one = /^\/keys\/(key_[0-9A-Za-z]{16})$/.exec(path);
    if (one?.[1] !== undefined) await keyPage(main, one[1]);
    else await keysPage(main, new URLSearchParams(query));
    main.focus({ preventScroll: true });
  } catch (problem) {
    if (problem instanceof ApiProblem && problem.status === 401) return;
    say(problem instanceof Error ? problem.message : String(problem));
  }
}

onTokenRefused((message) => {
  for (const dialog of document.querySelectorAll('dialog')) dialog.remove();
  showSignIn(message);
});
signOut.addEventListener('click', () => {
  session.signOut();
  for (const dialog of document.querySelectorAll('dialog')) dialog.remove();
  showSignIn('Signed out.');
});
window.addEventListener('hashchange', () => void route());
void route();
