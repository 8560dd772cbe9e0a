import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_DRAIN_SECONDS, DEFAULT_TIMEOUTS, loadConfig } from '../../src/config/config.js';
import {
  DEPLOY_DIR,
  KUBERNETES_DIR,
  type KubernetesObject,
  kubernetesProblem,
  readCompose,
  readKubernetes,
} from './manifests.js';

/**
 * deploy/kubernetes/ as `kubectl apply -f deploy/kubernetes/` applies it: valid against the
 * Kubernetes API's schemas (kubernetes-models), the same environment as deploy/compose.yaml's
 * instances, the Secret out of the applied set, a migration Job per release, and a stop that the
 * kubelet does not cut short.
 */
type Json = Record<string, unknown>;
const ROOT = join(DEPLOY_DIR, '..');
const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as Json)
  .version as string;
const EXAMPLES_DIR = join(KUBERNETES_DIR, 'examples');
const podPath = ['spec', 'template', 'spec'] as const;

/**
 * Variables whose values differ between compose and Kubernetes, and why; every other variable
 * the instances get must be set in both, to the same value.
 */
const DIFFERENT_VALUES: Record<string, string> = {
  PUBLIC_BASE_URL: 'the address clients use differs per deployment',
  TRUST_PROXY: "HAProxy's one address in compose, the ingress controller's pods in Kubernetes",
  ADMIN_HOST: "HAProxy's admin port in compose, kubectl port-forward to the pod's loopback here",
  DATABASE_URL: 'the Secret / petstore.env: host names and passwords of each deployment',
  REDIS_URL: 'the Secret / petstore.env: host names of each deployment',
};

function at(value: unknown, ...path: (string | number)[]): unknown {
  let current = value;
  for (const key of path) current = (current as Record<string | number, unknown>)?.[key];
  return current;
}

function objectOf(objects: readonly KubernetesObject[], kind: string): KubernetesObject {
  const found = objects.find((o) => o.kind === kind);
  if (found === undefined) throw new Error(`no ${kind} in deploy/kubernetes`);
  return found;
}

function readDir(dir: string): Record<string, string> {
  return Object.fromEntries(
    readdirSync(dir)
      .filter((f) => f.endsWith('.yaml'))
      .map((f) => [f, readFileSync(join(dir, f), 'utf8')]),
  );
}

/** The ENV lines of the Containerfile's last stage: what every container starts with. */
function imageEnvironment(): Record<string, string> {
  const text = readFileSync(join(DEPLOY_DIR, 'Containerfile'), 'utf8').replace(/\\\n/g, ' ');
  const runtime = text.slice(text.lastIndexOf('\nFROM '));
  const env: Record<string, string> = {};
  for (const line of runtime.split('\n').filter((l) => l.startsWith('ENV '))) {
    for (const [, name, value] of line.slice(4).matchAll(/([A-Z_][A-Z0-9_]*)=(\S+)/g)) {
      env[name ?? ''] = value ?? '';
    }
  }
  return env;
}

/** `NAME=value` lines of an env file (petstore.env.example stands for compose's petstore.env). */
function envFile(file: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of readFileSync(join(DEPLOY_DIR, file), 'utf8').split('\n')) {
    const match = /^([A-Z_][A-Z0-9_]*)=(.*)$/.exec(line.trim());
    if (match) env[match[1] ?? ''] = match[2] ?? '';
  }
  return env;
}

/** What compose's `petstore` service runs with: the image's ENV, its env_file, its environment. */
function composeEnvironment(compose = readCompose()): Record<string, string> {
  const service = at(compose, 'services', 'petstore') as Json;
  const files = [service.env_file ?? []].flat() as string[];
  const fromFiles = Object.assign(
    {},
    ...files.map((f) => envFile(f === 'petstore.env' ? 'petstore.env.example' : f)),
  ) as Record<string, string>;
  const environment = Object.fromEntries(
    Object.entries((service.environment ?? {}) as Json).map(([k, v]) => [k, String(v)]),
  );
  return { ...imageEnvironment(), ...fromFiles, ...environment };
}

/** What the Deployment's container runs with: the image's ENV, the Secret's keys, its env. */
function kubernetesEnvironment(objects = readKubernetes()): Record<string, string> {
  const container = at(objectOf(objects, 'Deployment').body, ...podPath, 'containers', 0) as Json;
  const secret = readKubernetes(readDir(EXAMPLES_DIR)).find((o) => o.kind === 'Secret');
  const env = (container.env ?? []) as { name: string; value?: string }[];
  return {
    ...imageEnvironment(),
    ...((at(secret?.body, 'stringData') ?? {}) as Record<string, string>),
    ...Object.fromEntries(env.map((e) => [e.name, e.value ?? ''])),
  };
}

/** The differences an operator would have to explain: names set in one only, or other values. */
function environmentDifferences(
  compose: Record<string, string>,
  kubernetes: Record<string, string>,
): string[] {
  const names = [...new Set([...Object.keys(compose), ...Object.keys(kubernetes)])].sort();
  return names.flatMap((name) => {
    if (!(name in compose)) return [`${name}: set in Kubernetes only`];
    if (!(name in kubernetes)) return [`${name}: set in compose only`];
    if (compose[name] !== kubernetes[name] && !(name in DIFFERENT_VALUES)) {
      return [`${name}: ${compose[name]} in compose, ${kubernetes[name]} in Kubernetes`];
    }
    return [];
  });
}

describe('deploy/kubernetes', () => {
  it('applies a Deployment, Service, PodDisruptionBudget and Job, all valid; no Secret', () => {
    const objects = readKubernetes();
    expect(objects.map((o) => o.kind).sort()).toEqual([
      'Deployment',
      'Job',
      'PodDisruptionBudget',
      'Service',
    ]);
    expect(objects.map(kubernetesProblem).filter((p) => p !== undefined)).toEqual([]);
  });

  it('keeps the Secret as a valid example outside the applied folder', () => {
    const examples = readKubernetes(readDir(EXAMPLES_DIR));
    expect(examples.map((o) => o.kind)).toEqual(['Secret']);
    expect(examples.map(kubernetesProblem).filter((p) => p !== undefined)).toEqual([]);
    const secret = objectOf(examples, 'Secret');
    expect(Object.keys(at(secret.body, 'stringData') as Json).sort()).toEqual([
      'DATABASE_URL',
      'REDIS_URL',
    ]);
    // What applying never overwrites is what every pod reads.
    for (const kind of ['Deployment', 'Job']) {
      const pod = at(objectOf(readKubernetes(), kind).body, ...podPath);
      for (const container of at(pod, 'containers') as Json[]) {
        expect(at(container, 'envFrom', 0, 'secretRef', 'name'), kind).toBe(
          at(secret.body, 'metadata', 'name'),
        );
      }
    }
  });

  it('is refused by the schema when a field has the wrong type or a required one is missing', () => {
    const files = readDir(KUBERNETES_DIR);
    const deployment = files['deployment.yaml'] ?? '';
    const job = files['migrate-job.yaml'] ?? '';
    const pdb = files['pod-disruption-budget.yaml'] ?? '';
    const broken: Record<string, [string, string]> = {
      'replicas.yaml': [deployment, deployment.replace('replicas: 3', 'replicas: three')],
      'prestop.yaml': [deployment, deployment.replace('seconds: 5', 'seconds: five')],
      'grace.yaml': [
        deployment,
        deployment.replace(
          /terminationGracePeriodSeconds: (\d+)/,
          'terminationGracePeriodSeconds: [$1]',
        ),
      ],
      'job.yaml': [job, job.replace('restartPolicy: Never', 'restartPolicy: [Never]')],
      'no-name.yaml': [job, job.replace('- name: migrate\n          image:', '- image:')],
      'pdb.yaml': [pdb, pdb.replace('maxUnavailable: 1', 'maxUnavailable: {one: 1}')],
    };
    for (const [file, [original, text]] of Object.entries(broken)) {
      expect(text, file).not.toBe(original);
      const problems = readKubernetes({ [file]: text }).map(kubernetesProblem);
      expect(problems[0], file).toBeDefined();
    }
  });

  it("gives the instances compose's environment, values differing only where named", () => {
    const kubernetes = kubernetesEnvironment();
    expect(environmentDifferences(composeEnvironment(), kubernetes)).toEqual([]);
    // Whatever compose holds, these are what the issue asked every deployment to set.
    for (const name of ['TRUST_PROXY', 'OPS_PORT', 'OPS_HOST', 'ADMIN_PORT', 'DRAIN_SECONDS']) {
      expect(kubernetes[name], name).toBeDefined();
    }
    expect(kubernetes.TRUST_PROXY).not.toBe('true');
    // And the service takes it as it stands.
    const config = loadConfig(kubernetes);
    expect(config.ops).toEqual({ port: 9464, host: '0.0.0.0' });
    expect(config.admin?.port).toBe(8081);
  });

  it('sees a variable set in one file only, or a value changed', () => {
    const kubernetes = kubernetesEnvironment();
    const withoutOps = Object.fromEntries(
      Object.entries(kubernetes).filter(([name]) => name !== 'OPS_PORT'),
    );
    expect(environmentDifferences(kubernetes, kubernetes)).toEqual([]);
    expect(environmentDifferences(kubernetes, withoutOps)).toEqual([
      'OPS_PORT: set in compose only',
    ]);
    expect(environmentDifferences(kubernetes, { ...kubernetes, LOG_LEVEL: 'debug' })).toEqual([
      'LOG_LEVEL: set in Kubernetes only',
    ]);
    expect(environmentDifferences(kubernetes, { ...kubernetes, DRAIN_SECONDS: '9' })).toEqual([
      `DRAIN_SECONDS: ${kubernetes.DRAIN_SECONDS} in compose, 9 in Kubernetes`,
    ]);
    expect(environmentDifferences(kubernetes, { ...kubernetes, TRUST_PROXY: '10.1.2.3' })).toEqual(
      [],
    );
  });

  it('probes and exposes the ops port on the pod only; the Service has the API alone', () => {
    const objects = readKubernetes();
    const deployment = objectOf(objects, 'Deployment').body;
    const container = at(deployment, ...podPath, 'containers', 0) as Json;
    const env = kubernetesEnvironment(objects);
    const ports = container.ports as { name: string; containerPort: number }[];
    const portOf = (name: string) => ports.find((p) => p.name === name)?.containerPort;
    expect(portOf('http')).toBe(Number(env.PORT));
    expect(portOf('ops')).toBe(Number(env.OPS_PORT));
    expect(at(container, 'readinessProbe', 'httpGet')).toEqual({ path: '/readyz', port: 'ops' });
    expect(at(container, 'livenessProbe', 'httpGet')).toEqual({ path: '/healthz', port: 'ops' });
    const annotations = at(deployment, 'spec', 'template', 'metadata', 'annotations') as Json;
    expect(annotations).toMatchObject({
      'prometheus.io/scrape': 'true',
      'prometheus.io/port': env.OPS_PORT,
      'prometheus.io/path': '/metrics',
    });
    const service = objectOf(objects, 'Service').body;
    expect(at(service, 'spec', 'type')).toBe('ClusterIP');
    expect(at(service, 'spec', 'ports')).toEqual([
      { name: 'http', port: 80, targetPort: 'http', protocol: 'TCP' },
    ]);
  });

  it('gives a stopping pod its preStop, the drain and the shutdown grace, derived once', () => {
    const pod = at(objectOf(readKubernetes(), 'Deployment').body, ...podPath) as Json;
    const container = at(pod, 'containers', 0);
    const env = kubernetesEnvironment();
    const preStop = Number(at(container, 'lifecycle', 'preStop', 'sleep', 'seconds'));
    const drain = Number(env.DRAIN_SECONDS ?? DEFAULT_DRAIN_SECONDS);
    const graceMs = Number(env.SHUTDOWN_GRACE_MS ?? DEFAULT_TIMEOUTS.shutdownGraceMs);
    const margin = 5;
    const derived = preStop + drain + Math.ceil(graceMs / 1000) + margin;
    expect(pod.terminationGracePeriodSeconds).toBe(derived);
    // The derivation is written once, at the top of deployment.yaml, with these numbers.
    const text = readFileSync(join(KUBERNETES_DIR, 'deployment.yaml'), 'utf8');
    expect(text).toContain(
      `preStop ${preStop} + DRAIN_SECONDS ${drain} + SHUTDOWN_GRACE_MS ${graceMs / 1000} s + margin ${margin} = ${derived}`,
    );
  });

  it('runs each release with its own migration Job and image tag', () => {
    const objects = readKubernetes();
    const job = objectOf(objects, 'Job').body;
    expect(at(job, 'metadata', 'name')).toBe(`petstore-migrate-${VERSION.replaceAll('.', '-')}`);
    expect(at(job, ...podPath, 'containers', 0, 'command')).toEqual([
      'node',
      'dist/cli/main.js',
      'migrate',
    ]);
    for (const kind of ['Deployment', 'Job']) {
      for (const container of at(
        objectOf(objects, kind).body,
        ...podPath,
        'containers',
      ) as Json[]) {
        expect(container.image, kind).toBe(`petstore:${VERSION}`);
      }
    }
    const text = readFileSync(join(KUBERNETES_DIR, 'migrate-job.yaml'), 'utf8');
    expect(text).toContain(`job/${String(at(job, 'metadata', 'name'))}`);
  });

  it('runs every pod as non-root on a read-only root file system', () => {
    const objects = readKubernetes();
    for (const kind of ['Deployment', 'Job']) {
      const pod = at(objectOf(objects, kind).body, ...podPath);
      expect(at(pod, 'securityContext', 'runAsNonRoot'), kind).toBe(true);
      for (const container of at(pod, 'containers') as Json[]) {
        expect(at(container, 'securityContext', 'readOnlyRootFilesystem'), kind).toBe(true);
      }
    }
  });
});
