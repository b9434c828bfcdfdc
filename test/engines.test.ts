import { readFileSync } from 'node:fs';
import semver from 'semver';
import { describe, expect, it } from 'vitest';

const root = new URL('../', import.meta.url);
const pkg = JSON.parse(readFileSync(new URL('package.json', root), 'utf8')) as { engines: { node: string } };
const lock = JSON.parse(readFileSync(new URL('package-lock.json', root), 'utf8')) as {
  packages: Record<string, { engines?: { node?: string } | string[] }>;
};

describe('engines', () => {
  it('every installed package runs on the oldest Node.js the README promises (no EBADENGINE)', () => {
    const oldest = semver.minVersion(pkg.engines.node)?.version;
    expect(oldest).toBe('20.19.0');
    expect(readFileSync(new URL('README.md', root), 'utf8')).toContain('Node.js 20.19 or newer');
    const refusing = Object.entries(lock.packages)
      .map(([path, entry]) => [path, Array.isArray(entry.engines) ? undefined : entry.engines?.node] as const)
      .filter(([, range]) => range !== undefined && !semver.satisfies(oldest as string, range as string));
    expect(refusing).toEqual([]);
    expect(Object.keys(lock.packages).length).toBeGreaterThan(100);
  });
});
