import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'vitest';
import { parse } from 'yaml';

export const DEPLOY_DIR = join(import.meta.dirname, '..', '..', 'deploy');
export const PROMETHEUS_DIR = join(DEPLOY_DIR, 'prometheus');
export const RULES_FILE = join(PROMETHEUS_DIR, 'petstore-alerts.yaml');
export const RULE_TESTS_FILE = join(PROMETHEUS_DIR, 'petstore-alerts.test.yaml');
export const DASHBOARD_FILE = join(DEPLOY_DIR, 'grafana', 'petstore-dashboard.json');

export interface AlertRule {
  alert: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

export interface RulesFile {
  groups: { name: string; rules: AlertRule[] }[];
}

export function readRules(): RulesFile {
  return parse(readFileSync(RULES_FILE, 'utf8')) as RulesFile;
}

export function alertRules(rules: RulesFile = readRules()): AlertRule[] {
  return rules.groups.flatMap((group) => group.rules);
}

export interface Target {
  refId: string;
  expr: string;
  datasource?: { type?: string; uid?: string };
}

export interface Panel {
  id: number;
  type: string;
  title: string;
  datasource?: { type?: string; uid?: string };
  gridPos: { h: number; w: number; x: number; y: number };
  targets?: Target[];
  panels?: Panel[];
}

export interface Dashboard {
  uid: string;
  title: string;
  templating: { list: { name: string; type: string; query?: unknown }[] };
  panels: Panel[];
}

export function readDashboard(): Dashboard {
  return JSON.parse(readFileSync(DASHBOARD_FILE, 'utf8')) as Dashboard;
}

/** Every PromQL expression of the dashboard, with the title of its panel. */
export function dashboardExprs(dashboard: Dashboard = readDashboard()): {
  panel: string;
  expr: string;
}[] {
  return dashboard.panels.flatMap((panel) =>
    (panel.targets ?? []).map((target) => ({ panel: panel.title, expr: target.expr })),
  );
}

/**
 * Grafana's variables as a query to Prometheus would see them once Grafana has filled them in: the
 * job of the test's scrape config, every instance, and fixed windows for the interval variables.
 */
export function withVariables(expr: string, job: string): string {
  return expr
    .replaceAll('$job', job)
    .replaceAll('$instance', '.+')
    .replaceAll('$__rate_interval', '1m')
    .replaceAll('$__range', '5m');
}

/**
 * The metric names an expression reads: the service's (`petstore_...`) and Prometheus's own `up`.
 * Every selector in these files names its metric before its braces, never by `__name__`.
 */
export function metricNames(expr: string): string[] {
  // No PromQL function or label here starts with `petstore_`; `up` is always read with a matcher.
  return [...expr.matchAll(/\b(petstore_[a-z0-9_]+|up(?=\{))\b/g)].map((m) => m[1] ?? '');
}

/** Every metric name the dashboard and the alert rules read, sorted. */
export function namedMetrics(): string[] {
  const exprs = [...dashboardExprs().map((e) => e.expr), ...alertRules().map((rule) => rule.expr)];
  return [...new Set(exprs.flatMap(metricNames))].sort();
}

/** Runs a command bounded in time; stdout and stderr together. */
export function run(
  command: string,
  args: readonly string[],
  cwd: string = PROMETHEUS_DIR,
): { status: number | null; output: string } {
  const result = spawnSync(command, args, { cwd, encoding: 'utf8', timeout: 60_000 });
  return { status: result.status, output: `${result.stdout ?? ''}${result.stderr ?? ''}` };
}

/** Whether `command --version` runs. */
export function installed(command: string): boolean {
  return spawnSync(command, ['--version'], { stdio: 'ignore' }).status === 0;
}

/**
 * Whether `suite`, which needs Debian's `prometheus` package (promtool and prometheus), can run:
 * skipped with a warning without it, one failing test in CI (.ci/run installs it).
 */
export function requirePrometheus(suite: string, commands: readonly string[]): boolean {
  const missing = commands.filter((command) => !installed(command));
  if (missing.length === 0) return true;
  const why = `${missing.join(' and ')} not found (Debian: apt-get install prometheus)`;
  if (process.env.CI === 'true') {
    describe(suite, () => {
      it(`needs ${missing.join(', ')}`, () => {
        throw new Error(`${why}: CI must provide it`);
      });
    });
  } else {
    console.warn(`skipping ${suite}: ${why}`);
    describe.skip(suite, () => {
      it(`needs ${missing.join(', ')}`, () => {});
    });
  }
  return false;
}
