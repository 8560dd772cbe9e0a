import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { composeProblems, DEPLOY_DIR, readCompose, SHUTDOWN_GRACE_SECONDS } from './manifests.js';

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
