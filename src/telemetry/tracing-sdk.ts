import { context } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  defaultResource,
  detectResources,
  resourceAttributesEnvDetector,
  resourceFromAttributes,
  serviceNameEnvDetector,
} from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  type Sampler,
  type SpanExporter,
  TraceIdRatioBasedSampler,
  TracerProvider,
} from '@opentelemetry/sdk-trace';
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions';
import type { TracingConfig } from '../config/config.js';
import type { TracedService, Tracing } from './tracing.js';
import { callSpans, requestSpans } from './tracing-spans.js';

/** OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG as the specification defines them. */
function sampler(config: TracingConfig): Sampler {
  const ratio = () => new TraceIdRatioBasedSampler(config.ratio);
  switch (config.sampler) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return ratio();
    case 'parentbased_always_on':
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: ratio() });
  }
}

/** Each exporter reads its address, headers and timeout from OTEL_EXPORTER_OTLP_* itself. */
async function exporter(protocol: TracingConfig['protocol']): Promise<SpanExporter> {
  const { OTLPTraceExporter } =
    protocol === 'http/json'
      ? await import('@opentelemetry/exporter-trace-otlp-http')
      : await import('@opentelemetry/exporter-trace-otlp-proto');
  return new OTLPTraceExporter();
}

/** The SDK, set up once per process by startTracing (tracing.ts), which loads this file. */
export async function createTracing(
  config: TracingConfig,
  service: TracedService,
): Promise<Tracing> {
  const contextManager = new AsyncLocalStorageContextManager();
  context.setGlobalContextManager(contextManager);
  // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES win over what the service says of itself.
  const resource = defaultResource()
    .merge(
      resourceFromAttributes({
        [ATTR_SERVICE_NAME]: 'pet-adoption-service',
        [ATTR_SERVICE_VERSION]: service.version,
        'vcs.ref.head.revision': service.commit,
      }),
    )
    .merge(detectResources({ detectors: [resourceAttributesEnvDetector, serviceNameEnvDetector] }));
  const provider = new TracerProvider({
    resource,
    sampler: sampler(config),
    spanProcessors: [new BatchSpanProcessor({ exporter: await exporter(config.protocol) })],
  });
  const tracer = provider.getTracer('pet-adoption-service', service.version);
  return {
    ...requestSpans(tracer, contextManager),
    traceCalls: callSpans(tracer),
    async shutdown() {
      await provider.shutdown();
      context.disable();
    },
  };
}
