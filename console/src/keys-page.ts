import { answer, client, type Key, type KeysQuery, nextCursor } from './api.js';
import { changeDialog, field, PLANS, planFields, scopeFields, secretDialog } from './dialogs.js';
import { count, h, replace, when } from './dom.js';

const STATES = ['active', 'expired', 'revoked', 'banned'] as const;
const SORTS = { created: 'Created', label: 'Label', lastUsed: 'Last used' } as const;
const PAGE = 50;

/** The listing's parameters as the hash carries them: #/keys?label=acme&state=active... */
function queryOf(params: URLSearchParams): KeysQuery {
  const pick = <T extends string>(name: string, allowed: readonly T[]): T | undefined =>
    allowed.find((value) => value === params.get(name));
  const query: KeysQuery = { limit: PAGE };
  const label = params.get('label');
  if (label) query.label = label;
  const state = pick('state', STATES);
  if (state) query.state = state;
  const plan = pick('plan', PLANS);
  if (plan) query.plan = plan;
  const sort = pick('sort', ['created', 'label', 'lastUsed'] as const);
  if (sort) query.sort = sort;
  const order = pick('order', ['asc', 'desc'] as const);
  if (order) query.order = order;
  const cursor = params.get('cursor');
  if (cursor) query.cursor = cursor;
  return query;
}

function hashOf(query: KeysQuery, cursor?: string): string {
  const params = new URLSearchParams();
  for (const name of ['label', 'state', 'plan', 'sort', 'order'] as const) {
    const value = query[name];
    if (value !== undefined && value !== '') params.set(name, value);
  }
  if (cursor !== undefined) params.set('cursor', cursor);
  const text = params.toString();
  return `#/keys${text === '' ? '' : `?${text}`}`;
}

function select(
  id: string,
  name: string,
  options: Array<[string, string]>,
  value: string | undefined,
) {
  return h(
    'select',
    { id, name },
    ...options.map(([v, label]) => h('option', { value: v, selected: v === (value ?? '') }, label)),
  );
}

function keyRow(key: Key): HTMLTableRowElement {
  return h(
    'tr',
    {},
    h(
      'th',
      { scope: 'row' },
      h('a', { href: `#/keys/${key.id}` }, key.name === '' ? key.id : key.name),
    ),
    h('td', {}, key.plan),
    h(
      'td',
      { class: 'num' },
      `${count(key.limits.perMinute)} / min, ${count(key.limits.perDay)} / day`,
    ),
    h('td', { class: 'scopes' }, key.scopes.join(', ')),
    h('td', {}, h('span', { class: `state state-${key.state}` }, key.state)),
    h('td', {}, when(key.lastUsedAt)),
    h('td', { class: 'num' }, count(key.deprecatedCalls)),
    h('td', {}, when(key.createdAt)),
  );
}

export async function keysPage(main: HTMLElement, params: URLSearchParams): Promise<void> {
  const query = queryOf(params);
  const label = h('input', {
    id: 'filter-label',
    name: 'label',
    type: 'search',
    value: query.label ?? '',
  });
  const state = select(
    'filter-state',
    'state',
    [['', 'any'], ...STATES.map((s): [string, string] => [s, s])],
    query.state,
  );
  const plan = select(
    'filter-plan',
    'plan',
    [['', 'any'], ...PLANS.map((p): [string, string] => [p, p])],
    query.plan,
  );
  const sort = select('filter-sort', 'sort', Object.entries(SORTS), query.sort ?? 'created');
  const order = select(
    'filter-order',
    'order',
    [
      ['asc', 'ascending'],
      ['desc', 'descending'],
    ],
    query.order ?? 'asc',
  );
  const filters = h(
    'form',
    { class: 'filters', role: 'search', 'aria-label': 'Filter keys' },
    field('Label contains', label),
    field('State', state),
    field('Plan', plan),
    field('Sort by', sort),
    field('Order', order),
    h('button', { type: 'submit', class: 'primary' }, 'Apply'),
  );
  filters.addEventListener('submit', (event) => {
    event.preventDefault();
    const chosen: KeysQuery = {};
    if (label.value !== '') chosen.label = label.value;
    if (state.value !== '') chosen.state = state.value as KeysQuery['state'];
    if (plan.value !== '') chosen.plan = plan.value as KeysQuery['plan'];
    chosen.sort = sort.value as KeysQuery['sort'];
    chosen.order = order.value as KeysQuery['order'];
    location.hash = hashOf(chosen);
  });
  const create = h('button', { type: 'button', class: 'primary', id: 'create-key' }, 'Create key');
  create.addEventListener('click', () => createDialog());
  const body = h('tbody', {});
  const table = h(
    'table',
    { class: 'keys' },
    h('caption', {}, 'API keys'),
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        ...[
          'Label',
          'Plan',
          'Limits',
          'Scopes',
          'State',
          'Last used',
          'Deprecated calls',
          'Created',
        ].map((c) => h('th', { scope: 'col' }, c)),
      ),
    ),
    body,
  );
  const pager = h('nav', { class: 'pager', 'aria-label': 'Pages' });
  replace(
    main,
    h('div', { class: 'title-row' }, h('h2', {}, 'Keys'), create),
    filters,
    table,
    pager,
  );
  const { data, response } = await answer(client.GET('/keys', { params: { query } }));
  if (data.length === 0) {
    body.append(h('tr', {}, h('td', { colspan: 8 }, 'No key matches.')));
  }
  for (const key of data) body.append(keyRow(key));
  const next = nextCursor(response);
  if (query.cursor !== undefined) pager.append(h('a', { href: hashOf(query) }, 'First page'));
  if (next !== undefined)
    pager.append(h('a', { href: hashOf(query, next), rel: 'next' }, 'Next page'));
}

function createDialog(): void {
  const name = h('input', {
    id: 'create-name',
    name: 'name',
    type: 'text',
    maxlength: 100,
    required: true,
  });
  const plan = planFields('create');
  const scopes = scopeFields('create');
  const expires = h('input', { id: 'create-expires', name: 'expires', type: 'date' });
  changeDialog({
    title: 'Create a key',
    fields: [
      field('Label', name),
      ...plan.nodes,
      ...scopes.nodes,
      field('Expires on (UTC, optional)', expires),
    ],
    confirm: 'Create key',
    run: async (_form, idempotencyKey) => {
      const chosen = scopes.value();
      const { data } = await answer(
        client.POST('/keys', {
          params: { header: { 'idempotency-key': idempotencyKey } },
          body: {
            ...plan.value(),
            name: name.value,
            scopes: chosen,
            ...(expires.value === '' ? {} : { expiresAt: `${expires.value}T00:00:00Z` }),
          },
        }),
      );
      secretDialog(`Key ${data.key.name} created`, data.secret, () => {
        location.hash = `#/keys/${data.key.id}`;
      });
    },
  });
}
