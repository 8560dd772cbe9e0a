import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import {
  type Attributes,
  type Span,
  SpanKind,
  SpanStatusCode,
  type TextMapGetter,
  type Tracer,
  ROOT_CONTEXT,
  trace,
} from '@opentelemetry/api';
import type { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import {
  ATTR_ERROR_TYPE,
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_HTTP_ROUTE,
} from '@opentelemetry/semantic-conventions';
import type { RequestTracing, TracedDependency, Tracing } from './tracing.js';

/** The key's id, which identifies a caller without being a secret. */
const ATTR_KEY_ID = 'petstore.api_key.id';

/** Methods outside this set are `_OTHER`, so a client cannot make a name or value per request. */
const KNOWN_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

const headers: TextMapGetter<IncomingHttpHeaders> = {
  get: (carrier, key) => carrier[key],
  keys: (carrier) => Object.keys(carrier),
};

/**
 * A server span per request, continued from `traceparent`. Only the request's method, route
 * template, status and key id are recorded: never its URL, headers or body, where a key, a secret
 * or a pet's name may be.
 */
export function requestSpans(
  tracer: Tracer,
  contexts: AsyncLocalStorageContextManager,
): RequestTracing {
  const propagator = new W3CTraceContextPropagator();
  const spans = new WeakMap<IncomingMessage, Span>();
  return {
    aroundRequest(request, response, handle) {
      const parent = propagator.extract(ROOT_CONTEXT, request.headers, headers);
      const method = KNOWN_METHODS.has(request.method ?? '')
        ? (request.method as string)
        : '_OTHER';
      const span = tracer.startSpan(
        method === '_OTHER' ? 'HTTP' : method,
        { kind: SpanKind.SERVER, attributes: { [ATTR_HTTP_REQUEST_METHOD]: method } },
        parent,
      );
      spans.set(request, span);
      // An unsampled request costs no context: its calls find no recording span and start none.
      if (!span.isRecording()) return handle();
      response.once('close', () => span.end());
      const active = trace.setSpan(parent, span);
      // Everything the request runs follows, a body that arrives later too (as the test with a
      // late body shows on Node 24), so the request's emitters need no binding.
      contexts.with(active, handle);
    },
    traceIdOf(request) {
      return spans.get(request)?.spanContext().traceId;
    },
    answered(request, answer) {
      const span = spans.get(request);
      if (span === undefined || !span.isRecording()) return;
      const method = KNOWN_METHODS.has(answer.method) ? answer.method : undefined;
      if (answer.route !== undefined && method !== undefined) {
        span.updateName(`${method} ${answer.route}`);
        span.setAttribute(ATTR_HTTP_ROUTE, answer.route);
      }
      span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, answer.status);
      if (answer.keyId !== undefined) span.setAttribute(ATTR_KEY_ID, answer.keyId);
      if (answer.status >= 500) {
        span.setStatus({ code: SpanStatusCode.ERROR });
        span.setAttribute(ATTR_ERROR_TYPE, String(answer.status));
      }
    },
  };
}

type Method = (...args: unknown[]) => unknown;

/** A child span around a call, when the request it serves is traced. */
function tracedCall(
  tracer: Tracer,
  name: string,
  attributes: Attributes,
  call: () => unknown,
): unknown {
  const parent = trace.getActiveSpan();
  if (parent === undefined || !parent.isRecording()) return call();
  return tracer.startActiveSpan(name, { kind: SpanKind.CLIENT, attributes }, (span) => {
    // Only the error's class: a driver's message may quote the values of the statement.
    const failed = (error: unknown) => {
      span.setStatus({ code: SpanStatusCode.ERROR });
      span.setAttribute(ATTR_ERROR_TYPE, error instanceof Error ? error.name : 'unknown');
      span.end();
      throw error;
    };
    let result: unknown;
    try {
      result = call();
    } catch (error) {
      failed(error);
    }
    if (!(result instanceof Promise)) {
      span.end();
      return result;
    }
    return result.then((value: unknown) => {
      span.end();
      return value;
    }, failed);
  });
}

/**
 * The port with a span around each call of the methods named, so that storage and the Redis
 * stores need know nothing of tracing. A proxy: the port's other methods and its fields are
 * untouched, and its methods run on the port itself (private fields keep working).
 */
export function callSpans(tracer: Tracer): Tracing['traceCalls'] {
  return <T extends object>(
    port: T,
    dependency: TracedDependency,
    methods: readonly (keyof T & string)[],
  ): T => {
    const wrapped = new Map<PropertyKey, Method>();
    for (const name of methods) {
      const method = port[name] as Method;
      const attributes: Attributes = {
        'db.system.name': dependency.system,
        // The name older backends and the task's readers look for.
        'db.system': dependency.system,
        'db.operation.name': name,
      };
      const spanName = `${dependency.component} ${name}`;
      wrapped.set(name, (...args) =>
        tracedCall(tracer, spanName, attributes, () => method.apply(port, args)),
      );
    }
    const bound = new Map<PropertyKey, Method>();
    return new Proxy(port, {
      get(target, property) {
        const own = wrapped.get(property) ?? bound.get(property);
        if (own !== undefined) return own;
        const value: unknown = Reflect.get(target, property, target);
        if (typeof value !== 'function') return value;
        const method = (value as Method).bind(target);
        bound.set(property, method);
        return method;
      },
    });
  };
}
