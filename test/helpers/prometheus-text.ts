import { expect } from 'vitest';

/** GET /metrics at `baseUrl`: asserts a Prometheus text answer and returns it. */
export async function scrapeAt(baseUrl: string): Promise<string> {
  const res = await fetch(`${baseUrl}/metrics`);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return res.text();
}

/** The value of the sample with exactly these labels, 0 when absent. */
export function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  for (const line of text.split('\n')) {
    const match = /^([a-z_]+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const have = (match[2] ?? '').split(',').filter(Boolean);
    if (wanted.every((label) => have.includes(label)) && have.length === wanted.length) {
      return Number(match[3]);
    }
  }
  return 0;
}

/** Every value a label takes among the samples of `name`. */
export function labelValues(text: string, name: string, label: string): string[] {
  const values = new Set<string>();
  const pattern = new RegExp(`^${name}\\{[^}]*\\b${label}="([^"]*)"`, 'gm');
  for (const match of text.matchAll(pattern)) values.add(match[1] ?? '');
  return [...values].sort();
}
