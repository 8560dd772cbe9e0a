/**
 * Where a service process spent its CPU: the .cpuprofile files that `node --cpu-prof` wrote, as
 * self time per package (node_modules), per file of this project (dist/...), per Node module
 * (node:...) and per native function, in shares of the busy time (idle excluded). Self time, so
 * the shares add up to 100% and a package's share is what its own code cost.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

function place(node: ProfileNode): string {
  const { functionName, url } = node.callFrame;
  if (functionName === '(garbage collector)') return '(garbage collection)';
  if (functionName === '(program)' || functionName === '(idle)') return functionName;
  if (url === '') return `native ${functionName}`;
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1] as string;
  const own = /\/dist\/(.+)$/.exec(url);
  if (own) return `dist/${own[1]}`;
  return url.startsWith('node:') ? url : url.replace(/^file:\/\//, '');
}

export interface ProfileShares {
  file: string;
  busyMs: number;
  totalMs: number;
  shares: { place: string; percent: number }[];
}

export function summarizeProfile(file: string, top = 15): ProfileShares {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const microseconds = new Map<string, number>();
  let total = 0;
  profile.samples.forEach((id, i) => {
    const delta = profile.timeDeltas[i] ?? 0;
    total += delta;
    const node = byId.get(id);
    if (node === undefined) return;
    const where = place(node);
    microseconds.set(where, (microseconds.get(where) ?? 0) + delta);
  });
  const busy = total - (microseconds.get('(idle)') ?? 0);
  microseconds.delete('(idle)');
  const shares = [...microseconds]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([where, us]) => ({ place: where, percent: (100 * us) / Math.max(1, busy) }));
  return { file, busyMs: busy / 1000, totalMs: total / 1000, shares };
}

/** Every profile in the folder (a worker thread writes its own), as Markdown. */
export function describeProfiles(dir: string): string {
  const files = readdirSync(dir)
    .filter((name) => name.endsWith('.cpuprofile'))
    .sort();
  return files
    .map((name) => {
      const summary = summarizeProfile(join(dir, name));
      const lines = summary.shares.map(
        (share) => `| ${share.place} | ${share.percent.toFixed(1)}% |`,
      );
      return [
        `${name}: busy ${(summary.busyMs / 1000).toFixed(1)} s of ${(summary.totalMs / 1000).toFixed(1)} s`,
        '',
        '| self time in | share of busy CPU |',
        '| :-- | --: |',
        ...lines,
        '',
      ].join('\n');
    })
    .join('\n');
}
