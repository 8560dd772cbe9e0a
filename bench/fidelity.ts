/**
 * Before measuring: does the baseline still answer what the service answers? One request of each
 * kind to both, then the bodies and the header sets are compared. A difference makes the ratios
 * compare different work, so it is reported next to the table.
 */

/** Header values that differ by design: per request, per process, per port. */
const VARYING = new Set([
  'date',
  'x-request-id',
  'x-ratelimit-remaining',
  'x-ratelimit-reset',
  'ratelimit',
  'link',
  'location',
  'content-length',
  'connection',
  'keep-alive',
  // Each hashes its own Link (its own port) into the tag.
  'etag',
]);

interface Seen {
  status: number;
  headers: Map<string, string>;
  body: string;
}

async function fetchSeen(url: string, key: string, init: RequestInit = {}): Promise<Seen> {
  const response = await fetch(url, {
    ...init,
    headers: { authorization: `Bearer ${key}`, ...(init.headers ?? {}) },
  });
  const headers = new Map<string, string>();
  response.headers.forEach((value, name) => headers.set(name, value));
  return { status: response.status, headers, body: await response.text() };
}

/** The same request's answers from both; returns the differences found (none: empty). */
function compare(what: string, baseline: Seen, service: Seen): string[] {
  const problems: string[] = [];
  if (baseline.status !== service.status) {
    problems.push(`${what}: status ${baseline.status} (baseline) vs ${service.status} (service)`);
  }
  // Created pets get different ids; what matters is the bytes around them.
  const normalize = (body: string) => body.replace(/"id":\d+/, '"id":0');
  if (normalize(baseline.body) !== normalize(service.body)) {
    problems.push(
      `${what}: bodies differ\n  baseline ${baseline.body.slice(0, 200)}\n  service  ${service.body.slice(0, 200)}`,
    );
  }
  for (const name of new Set([...baseline.headers.keys(), ...service.headers.keys()])) {
    const [b, s] = [baseline.headers.get(name), service.headers.get(name)];
    if (b === undefined || s === undefined) {
      problems.push(
        `${what}: header ${name} only in the ${b === undefined ? 'service' : 'baseline'}`,
      );
    } else if (!VARYING.has(name) && b !== s) {
      problems.push(`${what}: header ${name}: ${JSON.stringify(b)} vs ${JSON.stringify(s)}`);
    }
  }
  const shape = (link: string | undefined) => link?.replace(/^<https?:\/\/[^/]+/, '<');
  if (shape(baseline.headers.get('link')) !== shape(service.headers.get('link'))) {
    problems.push(`${what}: Link differs beyond the address`);
  }
  return problems;
}

export async function checkFidelity(baseUrls: [string, string], key: string): Promise<string[]> {
  const [baseline, service] = baseUrls;
  const problems: string[] = [];
  const both = async (what: string, path: string, init?: RequestInit) => {
    const seen = [
      await fetchSeen(baseline + path, key, init),
      await fetchSeen(service + path, key, init),
    ] as const;
    problems.push(...compare(what, ...seen));
    return seen[1];
  };
  const first = await both('list', '/v1/pets?limit=20');
  await both('list-gzip', '/v1/pets?limit=20', { headers: { 'accept-encoding': 'gzip, br' } });
  const tags = [
    (await fetchSeen(`${baseline}/v1/pets?limit=20`, key)).headers.get('etag') ?? '',
    first.headers.get('etag') ?? '',
  ];
  const revalidated = await Promise.all(
    [baseline, service].map((base, i) =>
      fetchSeen(`${base}/v1/pets?limit=20`, key, { headers: { 'if-none-match': tags[i] ?? '' } }),
    ),
  );
  problems.push(...compare('list-304', revalidated[0]!, revalidated[1]!));
  await both('list-status', '/v1/pets?limit=20&status=available');
  const next = /^<https?:\/\/[^/]+(\/[^>]*)>/.exec(first.headers.get('link') ?? '')?.[1];
  if (next === undefined) problems.push('list: the service sent no Link to a next page');
  else await both('list-cursor', next);
  await both('get', '/v1/pets/17');
  await both('create', '/v1/pets', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{"name":"Bench Rex","categoryId":3,"status":"available"}',
  });
  return problems;
}
