import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/config.js';

const ENDPOINT = 'http://collector.example:4318';

describe('tracing settings (the standard OTEL_* variables)', () => {
  it('are off when no exporter is named and no endpoint given', () => {
    expect(
      loadConfig({ OTEL_SERVICE_NAME: 'pets', OTEL_TRACES_SAMPLER: 'always_on' }).tracing,
    ).toBe(undefined);
  });

  it('are off with OTEL_TRACES_EXPORTER=none or OTEL_SDK_DISABLED=true, whatever the endpoint', () => {
    expect(
      loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: ENDPOINT, OTEL_TRACES_EXPORTER: 'none' }).tracing,
    ).toBe(undefined);
    expect(
      loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: ENDPOINT, OTEL_SDK_DISABLED: 'TRUE' }).tracing,
    ).toBe(undefined);
  });

  it('are on with either endpoint variable or OTEL_TRACES_EXPORTER=otlp, with the specification defaults', () => {
    const defaults = { protocol: 'http/protobuf', sampler: 'parentbased_always_on', ratio: 1 };
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: ENDPOINT }).tracing).toEqual(defaults);
    expect(loadConfig({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: ENDPOINT }).tracing).toEqual(defaults);
    expect(loadConfig({ OTEL_TRACES_EXPORTER: 'otlp' }).tracing).toEqual(defaults);
  });

  it('take the protocol (the traces one first) and a 1% parent-based sampler', () => {
    expect(
      loadConfig({
        OTEL_EXPORTER_OTLP_ENDPOINT: ENDPOINT,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
        OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json',
        OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
        OTEL_TRACES_SAMPLER_ARG: '0.01',
      }).tracing,
    ).toEqual({ protocol: 'http/json', sampler: 'parentbased_traceidratio', ratio: 0.01 });
  });

  it.each([
    ['OTEL_TRACES_EXPORTER', 'jaeger', 'OTEL_TRACES_EXPORTER must be otlp or none'],
    ['OTEL_EXPORTER_OTLP_PROTOCOL', 'grpc', 'OTEL_EXPORTER_OTLP_PROTOCOL must be one of'],
    ['OTEL_TRACES_SAMPLER', 'sometimes', 'OTEL_TRACES_SAMPLER must be one of'],
    ['OTEL_TRACES_SAMPLER_ARG', '1.5', 'OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1'],
  ])('stop the start naming %s when it is %s', (name, value, message) => {
    const load = () => loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: ENDPOINT, [name]: value });
    expect(load).toThrow(ConfigError);
    expect(load).toThrow(message);
  });

  it('read LOG_SAMPLE_SUCCESS as a share from 0 to 1, all lines by default', () => {
    expect(loadConfig({}).logSampleSuccess).toBe(1);
    expect(loadConfig({ LOG_SAMPLE_SUCCESS: '0.1' }).logSampleSuccess).toBe(0.1);
    expect(() => loadConfig({ LOG_SAMPLE_SUCCESS: '10%' })).toThrow(
      'LOG_SAMPLE_SUCCESS must be a number from 0 to 1 (got "10%")',
    );
  });
});
