import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One span as OTLP/JSON writes it (ids in hex), its attributes flattened to values. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  name: string;
  kind: number;
  attributes: Record<string, string | number | boolean>;
}

interface OtlpValue {
  stringValue?: string;
  intValue?: number | string;
  boolValue?: boolean;
  doubleValue?: number;
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: { key: string; value: OtlpValue }[];
}
interface OtlpTraces {
  resourceSpans?: { scopeSpans?: { spans?: OtlpSpan[] }[] }[];
}

function valueOf(value: OtlpValue): string | number | boolean {
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.doubleValue !== undefined) return value.doubleValue;
  return value.boolValue ?? '';
}

/**
 * A collector's OTLP/HTTP endpoint, in the test: accepts `POST /v1/traces` with JSON bodies
 * (OTEL_EXPORTER_OTLP_PROTOCOL=http/json) and keeps every body and span it received.
 */
export class OtlpReceiver {
  readonly bodies: string[] = [];
  readonly spans: ReceivedSpan[] = [];
  readonly requests: string[] = [];
  private readonly waiters: Array<{
    match: (span: ReceivedSpan) => boolean;
    found: (span: ReceivedSpan) => void;
  }> = [];
  private constructor(private readonly server: Server) {}

  static async start(): Promise<OtlpReceiver> {
    const receiver: OtlpReceiver = new OtlpReceiver(
      createServer((request, response) => {
        let body = '';
        request.setEncoding('utf8');
        request.on('data', (chunk: string) => (body += chunk));
        request.on('end', () => {
          receiver.requests.push(`${request.method} ${request.url}`);
          if (request.method === 'POST' && request.url === '/v1/traces') receiver.take(body);
          response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
        });
      }),
    );
    await new Promise<void>((resolve) => receiver.server.listen(0, '127.0.0.1', resolve));
    return receiver;
  }

  get endpoint(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  private take(body: string): void {
    this.bodies.push(body);
    const traces = JSON.parse(body) as OtlpTraces;
    for (const resource of traces.resourceSpans ?? []) {
      for (const scope of resource.scopeSpans ?? []) {
        for (const span of scope.spans ?? []) {
          const received: ReceivedSpan = {
            traceId: span.traceId,
            spanId: span.spanId,
            parentSpanId: span.parentSpanId || undefined,
            name: span.name,
            kind: span.kind,
            attributes: Object.fromEntries(
              (span.attributes ?? []).map(({ key, value }) => [key, valueOf(value)]),
            ),
          };
          this.spans.push(received);
          for (const waiter of this.waiters.filter((w) => w.match(received))) {
            this.waiters.splice(this.waiters.indexOf(waiter), 1);
            waiter.found(received);
          }
        }
      }
    }
  }

  /** The first span received that matches, as soon as it arrives (the test's timeout bounds it). */
  waitForSpan(match: (span: ReceivedSpan) => boolean): Promise<ReceivedSpan> {
    const already = this.spans.find(match);
    if (already !== undefined) return Promise.resolve(already);
    return new Promise((found) => this.waiters.push({ match, found }));
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
