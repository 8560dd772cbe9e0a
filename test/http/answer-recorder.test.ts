import type { IncomingMessage } from 'node:http';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { type Answered, AnswerRecorder } from '../../src/http/answers/answer-recorder.js';
import { createLogger } from '../../src/telemetry/logging/logger.js';
import { createMetrics } from '../../src/telemetry/metrics.js';
import type { AnsweredRequest } from '../../src/telemetry/tracing.js';
import { sample } from '../helpers/prometheus-text.js';

/**
 * The record of an answer, whichever path wrote it: the access line written by the process's pino
 * logger (its serializers, hooks and redaction apply), the request metrics, the span.
 */
const request = { headers: {} } as IncomingMessage;

const answered = (overrides: Partial<Answered> = {}): Answered => ({
  requestId: 'rec-1',
  method: 'GET',
  operation: 'getPet',
  route: '/v1/pets/{petId}',
  url: '/v1/pets/7',
  status: 200,
  seconds: 0.00123,
  key: { id: 'key_abc', plan: 'pro' },
  deprecated: true,
  ...overrides,
});

function recorder(options: { sampleSuccess?: number; random?: () => number } = {}) {
  const lines: string[] = [];
  const logger = createLogger({
    level: 'info',
    stream: { write: (line) => void lines.push(line) },
  });
  const metrics = createMetrics();
  const spans: AnsweredRequest[] = [];
  const recording = new AnswerRecorder({
    logger,
    metrics: metrics.http,
    tracing: {
      aroundRequest: (_request, _response, handle) => handle(),
      traceIdOf: () => '0af7651916cd43dd8448eb211c80319c',
      answered: (_request, answer) => void spans.push(answer),
    },
    sampleSuccess: options.sampleSuccess ?? 1,
    ...(options.random ? { random: options.random } : {}),
  });
  return { recording, lines, metrics, spans };
}

describe('the record of an answer', () => {
  it('writes the access line through the logger: the request id, trace id, route, status, duration and key id', () => {
    const { recording, lines } = recorder();
    recording.answered(request, answered());
    expect(lines).toHaveLength(1);
    const line = JSON.parse(lines[0] ?? '') as Record<string, unknown>;
    expect(line).toMatchObject({
      level: 30,
      pid: process.pid,
      requestId: 'rec-1',
      traceId: '0af7651916cd43dd8448eb211c80319c',
      method: 'GET',
      route: '/v1/pets/{petId}',
      status: 200,
      durationMs: 1.2,
      keyId: 'key_abc',
      msg: 'request completed',
    });
    // A matched route is named by its template, never by the URL a client sent.
    expect(line).not.toHaveProperty('url');
  });

  it('writes each route’s method and template on its lines, whichever answered before', () => {
    const { recording, lines } = recorder();
    recording.answered(request, answered());
    recording.answered(request, answered({ method: 'HEAD' }));
    recording.answered(request, answered({ route: '/v1/pets', operation: 'listPets' }));
    recording.answered(request, answered({ method: 'HEAD' }));
    const parsed = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(parsed.map(({ method, route }) => `${String(method)} ${String(route)}`)).toEqual([
      'GET /v1/pets/{petId}',
      'HEAD /v1/pets/{petId}',
      'GET /v1/pets',
      'HEAD /v1/pets/{petId}',
    ]);
    // The same fields as one object: the message last, no field twice.
    for (const line of lines) {
      const names = [...line.matchAll(/"([a-zA-Z]+)":/g)].map((m) => m[1]);
      expect(new Set(names).size).toBe(names.length);
      expect(names.at(-1)).toBe('msg');
    }
  });

  it('writes every field of the line through the logger’s redaction, the route’s too', () => {
    const lines: string[] = [];
    const logger = pino(
      { redact: { paths: ['route', 'method', 'keyId'], censor: '[redacted]' } },
      { write: (line: string) => void lines.push(line) },
    );
    const recording = new AnswerRecorder({ logger, sampleSuccess: 1 });
    recording.answered(request, answered());
    recording.answered(request, answered());
    for (const line of lines) {
      expect(JSON.parse(line)).toMatchObject({
        method: '[redacted]',
        route: '[redacted]',
        keyId: '[redacted]',
        requestId: 'rec-1',
      });
    }
    expect(lines).toHaveLength(2);
  });

  it('logs the URL of an unmatched request without query values other than the interface’s, and masks keys', () => {
    const { recording, lines } = recorder();
    const key = `pa_live_${'a'.repeat(36)}`;
    recording.answered(
      request,
      answered({ route: undefined, url: `/v1/${key}?api_key=${key}&limit=2`, status: 404 }),
    );
    const line = lines[0] ?? '';
    expect(line).not.toContain(key);
    expect(JSON.parse(line)).toMatchObject({
      url: '/v1/pa_live_[redacted]?limit=2 (+1 other parameters)',
    });
  });

  it('counts the answer by operation, method and status, its duration, and a deprecated call by plan', async () => {
    const { recording, metrics } = recorder();
    recording.answered(request, answered());
    recording.answered(request, answered({ status: 404, key: undefined }));
    const text = await metrics.registry.metrics();
    const labels = { operation: 'getPet', method: 'GET' };
    expect(sample(text, 'petstore_http_requests_total', { ...labels, status: '200' })).toBe(1);
    expect(sample(text, 'petstore_http_requests_total', { ...labels, status: '404' })).toBe(1);
    expect(
      sample(text, 'petstore_http_request_duration_seconds_count', { operation: 'getPet' }),
    ).toBe(2);
    const deprecated = { operation: 'getPet', plan: 'pro' };
    expect(sample(text, 'petstore_deprecated_operation_calls_total', deprecated)).toBe(1);
  });

  it('tells the span its route, status and key', () => {
    const { recording, spans } = recorder();
    recording.answered(request, answered());
    expect(spans).toEqual([
      { method: 'GET', route: '/v1/pets/{petId}', status: 200, keyId: 'key_abc' },
    ]);
  });

  it('samples successful lines (LOG_SAMPLE_SUCCESS) and always writes refusals', () => {
    const { recording, lines } = recorder({ sampleSuccess: 0.5, random: () => 0.7 });
    recording.answered(request, answered());
    recording.answered(request, answered({ status: 429 }));
    expect(lines.map((line) => (JSON.parse(line) as { status: number }).status)).toEqual([429]);
  });
});
