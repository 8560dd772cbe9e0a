import createClient from 'openapi-fetch';
import type { components, paths } from './generated/admin-api.js';
import { session } from './session.js';

export type Key = components['schemas']['Key'];
export type NewKey = components['schemas']['NewKey'];
export type Usage = components['schemas']['Usage'];
export type Audit = components['schemas']['Audit'];
export type Plan = Key['plan'];
export type KeyState = Key['state'];
export type KeysQuery = NonNullable<paths['/keys']['get']['parameters']['query']>;

/** A refusal of the admin API, as the console tells it to the operator. */
export class ApiProblem extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** The typed client of the admin API (its own OpenAPI document), on this origin. */
export const client = createClient<paths>({ baseUrl: '/admin/v1' });
client.use({
  onRequest({ request }) {
    const token = session.token();
    if (token !== undefined) request.headers.set('authorization', `Bearer ${token}`);
    return request;
  },
});

let signedOut: (message: string) => void = () => undefined;

/** What happens when the API refuses the token: the console signs out and says why. */
export function onTokenRefused(handler: (message: string) => void): void {
  signedOut = handler;
}

interface Answer<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

/** The body of a successful answer, or an ApiProblem worded for people. */
export async function answer<T>(
  pending: Promise<Answer<T>>,
): Promise<{ data: T; response: Response }> {
  let result: Answer<T>;
  try {
    result = await pending;
  } catch {
    throw new ApiProblem(
      0,
      'network',
      'The admin listener cannot be reached. Check that it is running, then retry.',
    );
  }
  const { data, error, response } = result;
  if (response.ok && data !== undefined) return { data, response };
  const body = (error ?? {}) as { code?: string; message?: string };
  const code = body.code ?? 'unknown';
  const detail = body.message ?? response.statusText;
  if (response.status === 401) {
    const message = `The admin token was refused: ${detail}. Sign in with a valid token (petstore admin-tokens create).`;
    session.signOut();
    signedOut(message);
    throw new ApiProblem(401, code, message);
  }
  if (response.status === 429) {
    const wait = response.headers.get('retry-after');
    throw new ApiProblem(
      429,
      code,
      `Too many requests: ${detail}.${wait === null ? '' : ` Retry in ${wait} s.`}`,
    );
  }
  if (response.status === 503) {
    const wait = response.headers.get('retry-after');
    throw new ApiProblem(
      503,
      code,
      `The service is unavailable: ${detail}.${wait === null ? '' : ` Retry in ${wait} s.`}`,
    );
  }
  throw new ApiProblem(response.status, code, detail);
}

/** The cursor of the next page, from the `Link: <...>; rel="next"` header. */
export function nextCursor(response: Response): string | undefined {
  const link = response.headers.get('link');
  const target = link === null ? undefined : /<([^>]+)>;\s*rel="next"/.exec(link)?.[1];
  return target === undefined
    ? undefined
    : (new URL(target, location.origin).searchParams.get('cursor') ?? undefined);
}

/** One Idempotency-Key per change the operator confirms: a double click makes one change. */
export function idempotencyKey(): string {
  return crypto.randomUUID();
}
