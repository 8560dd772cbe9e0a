import { answer, client, type Audit, type Key, type Usage } from './api.js';
import { usageChart } from './chart.js';
import { changeDialog, field, planFields, scopeFields, secretDialog } from './dialogs.js';
import { count, h, replace, when } from './dom.js';

const GRACES: Array<[number, string]> = [
  [0, 'none: the old secret stops at once'],
  [3600, '1 hour'],
  [86_400, '24 hours'],
  [7 * 86_400, '7 days'],
];

function details(key: Key): HTMLElement {
  const rows: Array<[string, string]> = [
    ['Id', key.id],
    ['Secret prefix', key.prefix],
    ['State', key.state],
    ['Plan', key.plan],
    ['Limits', `${count(key.limits.perMinute)} per minute, ${count(key.limits.perDay)} per day`],
    ['Scopes', key.scopes.join(', ')],
    ['Expires', when(key.expiresAt)],
    ['Previous secret works until', when(key.previousSecretExpiresAt, 'no previous secret')],
    ['Banned until', when(key.bannedUntil, 'not banned')],
    ['Revoked', when(key.revokedAt, 'no')],
    ['Created', when(key.createdAt)],
    ['Last used', when(key.lastUsedAt)],
    ['Deprecated calls', count(key.deprecatedCalls)],
  ];
  return h(
    'dl',
    { class: 'details' },
    ...rows.flatMap(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]),
  );
}

function describeChange(entry: Audit[number]): string {
  return Object.entries(entry.changes)
    .map(([name, { from, to }]) => `${name}: ${JSON.stringify(from)} → ${JSON.stringify(to)}`)
    .join('; ');
}

function actorOf(entry: Audit[number]): string {
  const { actor } = entry;
  if (actor.kind === 'admin_token') return `admin token ${actor.id}`;
  if (actor.kind === 'cli') return `CLI ${actor.user}@${actor.host}`;
  return 'system';
}

function auditTable(audit: Audit): HTMLElement {
  return h(
    'table',
    { class: 'audit' },
    h('caption', {}, 'Audit trail, newest first'),
    h(
      'thead',
      {},
      h('tr', {}, ...['When', 'Action', 'Changes', 'By'].map((c) => h('th', { scope: 'col' }, c))),
    ),
    h(
      'tbody',
      {},
      ...audit.map((entry) =>
        h(
          'tr',
          {},
          h('td', {}, when(entry.at)),
          h('td', {}, entry.action),
          h('td', {}, describeChange(entry)),
          h('td', {}, actorOf(entry)),
        ),
      ),
    ),
  );
}

function usageTable(usage: Usage): HTMLElement {
  return h(
    'table',
    { class: 'usage', id: 'usage-table' },
    h('caption', {}, 'Requests per UTC day (the numbers of the chart)'),
    h(
      'thead',
      {},
      h('tr', {}, ...['Day', 'Admitted', 'Refused'].map((c) => h('th', { scope: 'col' }, c))),
    ),
    h(
      'tbody',
      {},
      ...usage.map((d) =>
        h(
          'tr',
          {},
          h('th', { scope: 'row' }, d.day),
          h('td', { class: 'num' }, String(d.admitted)),
          h('td', { class: 'num' }, String(d.refused)),
        ),
      ),
    ),
  );
}

async function usageSection(section: HTMLElement, keyId: string, days: 30 | 90): Promise<void> {
  const { data } = await answer(
    client.GET('/keys/{keyId}/usage', { params: { path: { keyId }, query: { days } } }),
  );
  const switcher = h(
    'div',
    { class: 'segmented', role: 'group', 'aria-label': 'Period' },
    ...([30, 90] as const).map((n) => {
      const button = h(
        'button',
        { type: 'button', 'aria-pressed': String(n === days), class: 'secondary' },
        `${n} days`,
      );
      button.addEventListener('click', () => void usageSection(section, keyId, n));
      return button;
    }),
  );
  const total = data.reduce(
    (sum, d) => ({ admitted: sum.admitted + d.admitted, refused: sum.refused + d.refused }),
    { admitted: 0, refused: 0 },
  );
  const chart = h('div', {
    class: 'chart',
    id: 'usage-chart',
    role: 'img',
    'aria-label': `Requests per day over the last ${days} days: ${count(total.admitted)} admitted, ${count(total.refused)} refused in all`,
  });
  const numbers = h('details', {}, h('summary', {}, 'The numbers'), usageTable(data));
  replace(
    section,
    h('div', { class: 'title-row' }, h('h3', {}, `Requests per day, last ${days} days`), switcher),
    chart,
    numbers,
  );
  usageChart(chart, data);
}

function actions(key: Key, reload: () => void): HTMLElement {
  const button = (label: string, id: string, onClick: () => void, danger = false) => {
    const b = h('button', { type: 'button', id, class: danger ? 'danger' : 'secondary' }, label);
    b.addEventListener('click', onClick);
    return b;
  };
  const id = key.id;
  const setPlan = () => {
    const plan = planFields('set-plan', {
      plan: key.plan,
      ...(key.plan === 'enterprise'
        ? { perMinute: key.limits.perMinute, perDay: key.limits.perDay }
        : {}),
    });
    changeDialog({
      title: `Change the plan of ${key.name || id}`,
      fields: plan.nodes,
      confirm: 'Change plan',
      run: async (_f, idem) => {
        await answer(
          client.PUT('/keys/{keyId}/plan', {
            params: { path: { keyId: id }, header: { 'idempotency-key': idem } },
            body: plan.value(),
          }),
        );
        reload();
      },
    });
  };
  const setScopes = () => {
    const scopes = scopeFields('set-scopes', key.scopes);
    changeDialog({
      title: `Set the scopes of ${key.name || id}`,
      fields: [
        h(
          'p',
          {},
          'Same key, same secret. Every instance holds the key to its new scopes within 5 seconds.',
        ),
        ...scopes.nodes,
      ],
      confirm: 'Set scopes',
      run: async (_f, idem) => {
        const chosen = scopes.value();
        await answer(
          client.PUT('/keys/{keyId}/scopes', {
            params: { path: { keyId: id }, header: { 'idempotency-key': idem } },
            body: { scopes: chosen },
          }),
        );
        reload();
      },
    });
  };
  const setExpiry = () => {
    const date = h('input', {
      id: 'expiry-date',
      type: 'date',
      value: key.expiresAt?.slice(0, 10),
    });
    const never = h('input', {
      id: 'expiry-never',
      type: 'checkbox',
      checked: key.expiresAt === null,
    });
    changeDialog({
      title: `Set the expiry of ${key.name || id}`,
      fields: [
        field('Expires on (UTC midnight)', date, 'A day in the past expires the key at once.'),
        h('div', { class: 'check' }, never, h('label', { for: 'expiry-never' }, 'Never expires')),
      ],
      confirm: 'Set expiry',
      run: async (_f, idem) => {
        if (!never.checked && date.value === '')
          throw new Error('Choose a day, or tick "Never expires".');
        const expiresAt = never.checked ? 'never' : `${date.value}T00:00:00Z`;
        await answer(
          client.PUT('/keys/{keyId}/expiry', {
            params: { path: { keyId: id }, header: { 'idempotency-key': idem } },
            body: { expiresAt },
          }),
        );
        reload();
      },
    });
  };
  const roll = () => {
    const grace = h(
      'select',
      { id: 'roll-grace' },
      ...GRACES.map(([s, label]) => h('option', { value: s, selected: s === 86_400 }, label)),
    );
    changeDialog({
      title: `Roll the secret of ${key.name || id}`,
      fields: [
        h('p', {}, 'The key gets a new secret, shown once. Its id, plan, counters and ban stay.'),
        field('The previous secret keeps working for', grace),
      ],
      confirm: 'Roll secret',
      danger: true,
      run: async (_f, idem) => {
        const { data } = await answer(
          client.POST('/keys/{keyId}/roll', {
            params: { path: { keyId: id }, header: { 'idempotency-key': idem } },
            body: { graceSeconds: Number(grace.value) },
          }),
        );
        secretDialog(`New secret of ${data.key.name || id}`, data.secret, reload);
      },
    });
  };
  const revoke = () => {
    const typed = h('input', {
      id: 'revoke-confirm',
      type: 'text',
      autocomplete: 'off',
      required: true,
    });
    changeDialog({
      title: `Revoke ${key.name || id} for good`,
      fields: [
        h(
          'p',
          {},
          'Every instance refuses the key within 5 seconds. A revoked key cannot be restored; create a new one instead.',
        ),
        field(`Type the key id (${id}) to confirm`, typed),
      ],
      confirm: 'Revoke key',
      danger: true,
      run: async (_f, idem) => {
        if (typed.value.trim() !== id) throw new Error(`Type ${id} to confirm.`);
        await answer(
          client.POST('/keys/{keyId}/revoke', {
            params: { path: { keyId: id }, header: { 'idempotency-key': idem } },
          }),
        );
        reload();
      },
    });
  };
  const unban = () =>
    changeDialog({
      title: `Lift the ban of ${key.name || id}`,
      fields: [
        h(
          'p',
          {},
          `The key is ${key.bannedUntil === null ? 'not banned now; this clears any ban on every instance' : `banned until ${when(key.bannedUntil)}`}.`,
        ),
      ],
      confirm: 'Unban key',
      run: async (_f, idem) => {
        await answer(
          client.POST('/keys/{keyId}/unban', {
            params: { path: { keyId: id }, header: { 'idempotency-key': idem } },
          }),
        );
        reload();
      },
    });
  const revoked = key.state === 'revoked';
  return h(
    'div',
    { class: 'actions', role: 'group', 'aria-label': 'Changes' },
    revoked ? null : button('Change plan', 'action-plan', setPlan),
    revoked ? null : button('Set scopes', 'action-scopes', setScopes),
    revoked ? null : button('Set expiry', 'action-expiry', setExpiry),
    revoked ? null : button('Roll secret', 'action-roll', roll),
    button('Unban', 'action-unban', unban),
    revoked ? null : button('Revoke', 'action-revoke', revoke, true),
  );
}

export async function keyPage(main: HTMLElement, keyId: string): Promise<void> {
  const reload = () => void keyPage(main, keyId);
  const [{ data: key }, { data: audit }] = await Promise.all([
    answer(client.GET('/keys/{keyId}', { params: { path: { keyId } } })),
    answer(client.GET('/audit', { params: { query: { keyId, order: 'desc', limit: 100 } } })),
  ]);
  const usage = h('section', { class: 'usage-section', 'aria-label': 'Usage' });
  replace(
    main,
    h('p', {}, h('a', { href: '#/keys' }, '← All keys')),
    h(
      'div',
      { class: 'title-row' },
      h('h2', { id: 'key-title' }, key.name || key.id),
      h('span', { class: `state state-${key.state}` }, key.state),
    ),
    actions(key, reload),
    details(key),
    usage,
    h('section', { 'aria-label': 'Audit trail' }, auditTable(audit)),
  );
  await usageSection(usage, keyId, 30);
}
