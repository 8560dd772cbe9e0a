import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  composeProblems,
  DEPLOY_DIR,
  type KubernetesObject,
  kubernetesProblem,
  readCompose,
  readKubernetes,
  SHUTDOWN_GRACE_SECONDS,
} from './manifests.js';

const composeText = readFileSync(join(DEPLOY_DIR, 'compose.yaml'), 'utf8');
type Json = Record<string, unknown>;

function at(value: unknown, ...path: (string | number)[]): unknown {
  let current = value;
  for (const key of path) current = (current as Record<string | number, unknown>)[key];
  return current;
}

function seconds(duration: string): number {
  const match = /^(\d+)s$/.exec(duration);
  if (match === null) throw new Error(`expected a duration in seconds, got ${duration}`);
  return Number(match[1]);
}

function objectOf(objects: readonly KubernetesObject[], kind: string): KubernetesObject {
  const found = objects.find((o) => o.kind === kind);
  if (found === undefined) throw new Error(`no ${kind} in deploy/kubernetes`);
  return found;
}

function envValue(container: unknown, name: string): string | undefined {
  const env = (at(container, 'env') ?? []) as { name: string; value?: string }[];
  return env.find((e) => e.name === name)?.value;
}

describe('deploy/compose.yaml', () => {
  it('is valid against the compose-spec schema', () => {
    expect(composeProblems(readCompose())).toEqual([]);
  });

  it('is refused by the schema when a service has a misspelled key or a bad duration', () => {
    const misspelled = composeText.replace('    stop_grace_period: 20s', '    stop_grace: 20s');
    const badDuration = composeText.replace('stop_grace_period: 20s', 'stop_grace_period: 20 sec');
    const badCondition = composeText.replace(
      'condition: service_completed_successfully',
      'condition: service_finished',
    );
    for (const broken of [misspelled, badDuration, badCondition]) {
      expect(broken).not.toBe(composeText);
      expect(composeProblems(readCompose(broken))).not.toEqual([]);
    }
  });

  it('runs instances only after the migration, with health checks on every service', () => {
    const services = at(readCompose(), 'services') as Record<string, Json>;
    expect(Object.keys(services).sort()).toEqual([
      'haproxy',
      'migrate',
      'petstore',
      'postgres',
      'prometheus',
      'redis',
    ]);
    expect(at(services.migrate, 'command')).toEqual(['node', 'dist/cli/main.js', 'migrate']);
    expect(at(services.petstore, 'depends_on', 'migrate', 'condition')).toBe(
      'service_completed_successfully',
    );
    expect(at(services.petstore, 'deploy', 'replicas')).toBeGreaterThanOrEqual(2);
    for (const name of ['postgres', 'redis', 'petstore', 'haproxy']) {
      expect(at(services[name], 'healthcheck', 'test'), name).toBeDefined();
    }
    for (const name of ['migrate', 'petstore']) {
      expect(at(services[name], 'read_only'), name).toBe(true);
      expect(at(services[name], 'env_file'), name).toBe('petstore.env');
    }
  });

  it('lets an instance drain: stop_grace_period >= DRAIN_SECONDS + shutdown grace', () => {
    const petstore = at(readCompose(), 'services', 'petstore');
    const drain = Number(at(petstore, 'environment', 'DRAIN_SECONDS'));
    expect(seconds(String(at(petstore, 'stop_grace_period')))).toBeGreaterThan(
      drain + SHUTDOWN_GRACE_SECONDS,
    );
  });

  it("takes a draining instance out of HAProxy's rotation before its drain ends", () => {
    const cfg = readFileSync(join(DEPLOY_DIR, 'haproxy', 'haproxy.cfg'), 'utf8');
    const drain = Number(at(readCompose(), 'services', 'petstore', 'environment', 'DRAIN_SECONDS'));
    expect(cfg).toMatch(/option httpchk GET \/readyz/);
    const check = /default-server check port (\d+) inter (\d+)s rise \d+ fall (\d+)/.exec(cfg);
    expect(check).not.toBeNull();
    expect(Number(check?.[2]) * Number(check?.[3])).toBeLessThan(drain);
    // The checks ask the operations listener, where no load on the pet API's port refuses them.
    const opsPort = at(readCompose(), 'services', 'petstore', 'environment', 'OPS_PORT');
    expect(check?.[1]).toBe(opsPort);
  });
});

describe('deploy/kubernetes', () => {
  it('holds a Deployment, Service, PodDisruptionBudget, migration Job and Secret, all valid', () => {
    const objects = readKubernetes();
    expect(objects.map((o) => o.kind).sort()).toEqual([
      'Deployment',
      'Job',
      'PodDisruptionBudget',
      'Secret',
      'Service',
    ]);
    expect(objects.map(kubernetesProblem).filter((p) => p !== undefined)).toEqual([]);
  });

  it('is refused by the schema when a field has the wrong type or a required one is missing', () => {
    const deployment = readFileSync(join(DEPLOY_DIR, 'kubernetes', 'deployment.yaml'), 'utf8');
    const job = readFileSync(join(DEPLOY_DIR, 'kubernetes', 'migrate-job.yaml'), 'utf8');
    const pdb = readFileSync(join(DEPLOY_DIR, 'kubernetes', 'pod-disruption-budget.yaml'), 'utf8');
    const broken: Record<string, [string, string]> = {
      'replicas.yaml': [deployment, deployment.replace('replicas: 3', 'replicas: three')],
      'prestop.yaml': [deployment, deployment.replace('seconds: 5', 'seconds: five')],
      'grace.yaml': [
        deployment,
        deployment.replace(
          'terminationGracePeriodSeconds: 30',
          'terminationGracePeriodSeconds: [30]',
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

  it('probes /readyz for readiness and /healthz for liveness', () => {
    const container = at(
      objectOf(readKubernetes(), 'Deployment').body,
      ...podPath,
      'containers',
      0,
    );
    expect(at(container, 'readinessProbe', 'httpGet', 'path')).toBe('/readyz');
    expect(at(container, 'livenessProbe', 'httpGet', 'path')).toBe('/healthz');
  });

  it('gives a stopping pod its preStop, the drain and the shutdown grace before SIGKILL', () => {
    const pod = at(objectOf(readKubernetes(), 'Deployment').body, ...podPath);
    const container = at(pod, 'containers', 0);
    const preStop = Number(at(container, 'lifecycle', 'preStop', 'sleep', 'seconds'));
    const drain = Number(envValue(container, 'DRAIN_SECONDS'));
    expect(drain).toBe(5);
    expect(preStop).toBeGreaterThan(0);
    // A margin of at least 5 s for the event loop to notice and the exit to happen.
    expect(Number(at(pod, 'terminationGracePeriodSeconds'))).toBeGreaterThanOrEqual(
      preStop + drain + SHUTDOWN_GRACE_SECONDS + 5,
    );
  });

  it('runs every pod as non-root on a read-only root file system, with the secret', () => {
    const objects = readKubernetes();
    const secret = objectOf(objects, 'Secret');
    expect(Object.keys(at(secret.body, 'stringData') as Json).sort()).toEqual([
      'DATABASE_URL',
      'REDIS_URL',
    ]);
    for (const kind of ['Deployment', 'Job']) {
      const pod = at(objectOf(objects, kind).body, ...podPath);
      expect(at(pod, 'securityContext', 'runAsNonRoot'), kind).toBe(true);
      for (const container of at(pod, 'containers') as Json[]) {
        expect(at(container, 'securityContext', 'readOnlyRootFilesystem'), kind).toBe(true);
        expect(at(container, 'envFrom', 0, 'secretRef', 'name'), kind).toBe(
          at(secret.body, 'metadata', 'name'),
        );
      }
    }
    const job = at(objectOf(objects, 'Job').body, ...podPath, 'containers', 0);
    expect(at(job, 'command')).toEqual(['node', 'dist/cli/main.js', 'migrate']);
  });
});

const podPath = ['spec', 'template', 'spec'] as const;

describe('deploy/systemd/petstore.service', () => {
  const unitPath = join(DEPLOY_DIR, 'systemd', 'petstore.service');
  const unit = readFileSync(unitPath, 'utf8');
  const setting = (text: string, key: string) => new RegExp(`^${key}=(.*)$`, 'm').exec(text)?.[1];

  it('waits for the drain and the shutdown grace before SIGKILL', () => {
    expect(setting(unit, 'KillSignal')).toBe('SIGTERM');
    const drain = Number(setting(unit, 'Environment=DRAIN_SECONDS'));
    expect(drain).toBe(5);
    expect(Number(setting(unit, 'TimeoutStopSec'))).toBeGreaterThan(drain + SHUTDOWN_GRACE_SECONDS);
    expect(setting(unit, 'Restart')).toBe('on-failure');
    expect(setting(unit, 'StateDirectory')).toBe('petstore');
    expect(setting(unit, 'ProtectSystem')).toBe('strict');
    expect(setting(unit, 'NoNewPrivileges')).toBe('yes');
  });

  const analyze = spawnSync('systemd-analyze', ['--version']).status === 0;
  it.skipIf(!analyze && process.env.CI !== 'true')(
    'passes systemd-analyze verify, which names any unknown or misspelled setting',
    () => {
      const dir = mkdtempSync(join(tmpdir(), 'petstore-unit-'));
      try {
        // verify checks that ExecStart's program exists: point it at this machine's node.
        const local = (text: string) =>
          text.replace(/^ExecStart=\S+/m, `ExecStart=${process.execPath}`);
        const verify = (text: string) => {
          const file = join(dir, 'petstore.service');
          writeFileSync(file, local(text));
          const run = spawnSync('systemd-analyze', ['verify', file], { encoding: 'utf8' });
          return (
            `${run.stdout}${run.stderr}`.trim() + (run.status === 0 ? '' : ` (exit ${run.status})`)
          );
        };
        expect(verify(unit)).toBe('');
        expect(verify(unit.replace('NoNewPrivileges=', 'NoNewPrivilege='))).toMatch(/Unknown key/);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );
});

// The image is built and run in image.test.ts; this only keeps the Containerfile's promises
// checkable without buildah.
describe('deploy/Containerfile', () => {
  const file = readFileSync(join(DEPLOY_DIR, 'Containerfile'), 'utf8');
  it('starts node itself as PID 1, as a numeric non-root user, with the database on /data', () => {
    expect(file).toMatch(/^CMD \["node", "dist\/main\.js"\]$/m);
    expect(file).toMatch(/^ARG BASE=docker\.io\/library\/node:24-slim$/m);
    expect(file).toMatch(/^USER 10001:10001$/m);
    expect(file).toMatch(/DATABASE_URL=sqlite:\/data\/petstore\.db/);
    expect(file).toMatch(/^VOLUME \["\/data"\]$/m);
    expect(file.match(/^FROM /gm)).toHaveLength(2);
  });
});
