import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import {
  alertRules,
  dashboardExprs,
  metricNames,
  type Panel,
  PROMETHEUS_DIR,
  readDashboard,
  readRules,
  requirePrometheus,
  RULE_TESTS_FILE,
  RULES_FILE,
  run,
} from './observability.js';

/*
 * The alert rules and the dashboard in deploy/, checked without a running service: promtool
 * checks the rules and the example config and runs the rules' unit tests, every alert has a case
 * where it fires and one where it stays quiet, and each of those cases fails when its alert is
 * made to always or never fire. The dashboard's expressions are run against a real Prometheus in
 * observability.scrape.test.ts.
 */

/** What issue 21 asks the dashboard to show; row titles are the operator's table of contents. */
const ROWS = [
  'Build and restarts',
  'Traffic',
  'Errors',
  'Latency by route',
  'Rate limits and bans',
  'Dependencies',
  'SQLite commit groups',
  'Saturation',
];

/** Every metric the dashboard must graph (the service's metrics an operator needs). */
const DASHBOARD_METRICS = [
  'petstore_build_info',
  'petstore_process_start_time_seconds',
  'petstore_http_requests_total',
  'petstore_http_request_duration_seconds_bucket',
  'petstore_rate_limited_total',
  'petstore_api_key_bans_total',
  'petstore_deprecated_operation_calls_total',
  'petstore_dependency_up',
  'petstore_ready',
  'petstore_pg_pool_connections',
  'petstore_pg_query_duration_seconds_bucket',
  'petstore_redis_command_duration_seconds_bucket',
  'petstore_redis_command_errors_total',
  'petstore_sqlite_commit_queue_depth',
  'petstore_sqlite_commit_group_size_bucket',
  'petstore_sqlite_commit_duration_seconds_bucket',
  'petstore_process_cpu_seconds_total',
  'petstore_process_resident_memory_bytes',
  'petstore_nodejs_eventloop_lag_p99_seconds',
  'petstore_connections_refused_total',
];

const ALERTS = [
  'PetstoreHighErrorRatio',
  'PetstoreLatencyHigh',
  'PetstoreNotReady',
  'PetstoreDependencyDown',
  'PetstoreBanBurst',
  'PetstoreRestarting',
  'PetstoreTargetDown',
];

interface RuleTest {
  name: string;
  alert_rule_test?: { alertname: string; exp_alerts: unknown[] }[];
}
interface RuleTestsFile {
  rule_files: string[];
  tests: RuleTest[];
}

const ruleTests = parse(readFileSync(RULE_TESTS_FILE, 'utf8')) as RuleTestsFile;
const scratch = mkdtempSync(join(tmpdir(), 'petstore-alerts-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/**
 * Runs `promtool test rules` in a scratch folder on the unit tests of `alert` whose cases fire
 * (`firing`) or stay quiet, against the rules with that alert's expression replaced by `expr`.
 */
function runCases(alert: string, firing: boolean, expr: (original: string) => string) {
  const rules = readRules();
  for (const rule of rules.groups.flatMap((g) => g.rules)) {
    if (rule.alert === alert) rule.expr = expr(rule.expr);
  }
  const tests = ruleTests.tests
    .map((test) => ({
      ...test,
      alert_rule_test: (test.alert_rule_test ?? []).filter(
        (c) => c.alertname === alert && c.exp_alerts.length > 0 === firing,
      ),
    }))
    .filter((test) => test.alert_rule_test.length > 0);
  writeFileSync(join(scratch, 'petstore-alerts.yaml'), stringify(rules));
  writeFileSync(join(scratch, 'cases.yaml'), stringify({ ...ruleTests, tests }));
  return run('promtool', ['test', 'rules', 'cases.yaml'], scratch);
}

if (requirePrometheus('the alert rules (promtool)', ['promtool'])) {
  describe('deploy/prometheus/petstore-alerts.yaml', () => {
    it('passes promtool check rules, with the seven alerts', () => {
      const check = run('promtool', ['check', 'rules', RULES_FILE]);
      expect(check.output).toContain('SUCCESS: 7 rules found');
      expect(check.status).toBe(0);
      expect(alertRules().map((r) => r.alert)).toEqual(ALERTS);
    });

    it('is loaded by the example prometheus.yml, which passes promtool check config', () => {
      const check = run('promtool', ['check', 'config', 'prometheus.yml']);
      expect(check.output).toContain('SUCCESS: 1 rule files found');
      expect(check.status, check.output).toBe(0);
    });

    it('passes its unit tests (promtool test rules petstore-alerts.test.yaml)', () => {
      const tests = run('promtool', ['test', 'rules', 'petstore-alerts.test.yaml'], PROMETHEUS_DIR);
      expect(tests.status, tests.output).toBe(0);
    });

    it('has for every alert a unit-test case where it fires and one where it stays quiet', () => {
      const cases = ruleTests.tests.flatMap((t) => t.alert_rule_test ?? []);
      for (const alert of ALERTS) {
        const mine = cases.filter((c) => c.alertname === alert);
        expect(
          mine.some((c) => c.exp_alerts.length > 0),
          `${alert} fires`,
        ).toBe(true);
        expect(
          mine.some((c) => c.exp_alerts.length === 0),
          `${alert} stays quiet`,
        ).toBe(true);
      }
    });

    // The cases must be able to fail: an alert that never fires breaks its firing cases, one that
    // always fires breaks its quiet ones, each run on that alert's cases alone.
    it.each(ALERTS)('%s: its cases fail when it never fires, and when it always fires', (alert) => {
      expect(runCases(alert, true, (e) => e).status).toBe(0);
      expect(runCases(alert, false, (e) => e).status).toBe(0);
      const never = runCases(alert, true, () => 'vector(1) < 0');
      expect(never.status, never.output).not.toBe(0);
      expect(never.output).toContain(`alertname: ${alert}`);
      const always = runCases(alert, false, (e) => `(${e}) or vector(1)`);
      expect(always.status, always.output).not.toBe(0);
      expect(always.output).toContain(`alertname: ${alert}`);
    });
  });
}

describe('deploy/grafana/petstore-dashboard.json', () => {
  const dashboard = readDashboard();
  const panels = dashboard.panels.filter((p) => p.type !== 'row');

  it('has the rows issue 21 asks for, in order', () => {
    expect(dashboard.panels.filter((p) => p.type === 'row').map((p) => p.title)).toEqual(ROWS);
  });

  it('reads Prometheus through its DS_PROMETHEUS variable, filtered by the job and instance variables', () => {
    const variables = dashboard.templating.list;
    expect(variables.map((v) => [v.name, v.type])).toEqual([
      ['DS_PROMETHEUS', 'datasource'],
      ['job', 'query'],
      ['instance', 'query'],
    ]);
    for (const panel of panels) {
      expect(panel.datasource?.uid, panel.title).toBe('${DS_PROMETHEUS}');
      expect(panel.targets?.length, panel.title).toBeGreaterThan(0);
      for (const target of panel.targets ?? []) {
        expect(target.datasource?.uid, panel.title).toBe('${DS_PROMETHEUS}');
        // Every selector of the expression (one per metric name) is narrowed to $job/$instance.
        const selectors = target.expr.match(/\{[^}]*\}/g) ?? [];
        expect(selectors.length, target.expr).toBe(metricNames(target.expr).length);
        for (const selector of selectors) {
          expect(selector, target.expr).toContain('job=~"$job", instance=~"$instance"');
        }
      }
    }
  });

  it('graphs every metric an operator needs', () => {
    const named = new Set(dashboardExprs(dashboard).flatMap((e) => metricNames(e.expr)));
    expect(DASHBOARD_METRICS.filter((name) => !named.has(name))).toEqual([]);
  });

  it('has unique panel ids and refIds, and panels that fit the 24-column grid without overlapping', () => {
    const ids = dashboard.panels.map((p) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
    const cells = new Set<string>();
    const overlapping: string[] = [];
    for (const panel of dashboard.panels as Panel[]) {
      const { x, y, w, h } = panel.gridPos;
      expect(x + w, panel.title).toBeLessThanOrEqual(24);
      for (let row = y; row < y + h; row++) {
        for (let column = x; column < x + w; column++) {
          const cell = `${row}:${column}`;
          if (cells.has(cell)) overlapping.push(panel.title);
          cells.add(cell);
        }
      }
      const refIds = (panel.targets ?? []).map((t) => t.refId);
      expect(new Set(refIds).size, panel.title).toBe(refIds.length);
    }
    expect([...new Set(overlapping)]).toEqual([]);
  });
});
