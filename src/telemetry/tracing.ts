import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TracingConfig } from '../config/config.js';

/** What the app learnt about a request by the time it answered, for the request's span. */
export interface AnsweredRequest {
  readonly method: string;
  /** The route template (`/v1/pets/{petId}`); undefined when no route matched. */
  readonly route: string | undefined;
  readonly status: number;
  /** The id of the API key that authenticated the request (never the key). */
  readonly keyId: string | undefined;
}

/** What the HTTP layer needs: a server span per request, and its trace id for the log lines. */
export interface RequestTracing {
  /**
   * Handles the request (`handle`) inside its server span, continued from a W3C `traceparent`,
   * so that every span the request's work starts is its child.
   */
  aroundRequest(request: IncomingMessage, response: ServerResponse, handle: () => void): void;
  /** The request's trace id (also when not sampled: it joins the logs to the caller's trace). */
  traceIdOf(request: IncomingMessage): string | undefined;
  /** Names the request's span by its route and records the outcome; the span ends with the response. */
  answered(request: IncomingMessage, answer: AnsweredRequest): void;
}

/** A dependency as the span of a call to it names it. */
export interface TracedDependency {
  /** The span name's prefix: `petstore.storage`, `petstore.redis`. */
  readonly component: string;
  /** db.system.name: `sqlite`, `postgresql`, `redis`. */
  readonly system: string;
}

export interface Tracing extends RequestTracing {
  /** The port with a child span around each call of the methods named (when a request is traced). */
  traceCalls<T extends object>(
    port: T,
    dependency: TracedDependency,
    methods: readonly (keyof T & string)[],
  ): T;
  /** Sends the spans still buffered and stops; the process's last step before it exits. */
  shutdown(): Promise<void>;
}

/** What the spans' resource says about this process besides OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES. */
export interface TracedService {
  readonly version: string;
  readonly commit: string;
}

/**
 * Tracing when the OTEL_* variables turn it on (config.tracing), else undefined. The SDK is loaded
 * here and only here, on demand: a process without those variables loads no OpenTelemetry module,
 * and every place that could trace checks for undefined once.
 */
export async function startTracing(
  config: TracingConfig | undefined,
  service: TracedService,
): Promise<Tracing | undefined> {
  if (config === undefined) return undefined;
  const { createTracing } = await import('./tracing-sdk.js');
  return createTracing(config, service);
}
