import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { registry } from '../../src/metrics/metrics.js';
// The deposit watcher's metrics register when their module loads (a worker with the watcher on).
import '../../src/deposits/metrics.js';

// The alert rules (deploy/prometheus/alerts.yml) may only name metrics and labels the service
// exports: a renamed metric would otherwise leave an alert that silently never fires.
const root = new URL('../../', import.meta.url);
const read = (path: string) => readFileSync(new URL(path, root), 'utf8');

/** Labels Prometheus adds to every scraped series. */
const TARGET_LABELS = ['job', 'instance'];

interface Exported {
  series: Map<string, string[]>;
}

/** Every series name the registry exposes (a histogram's _bucket, _sum, _count), with its labels. */
async function exported(): Promise<Exported> {
  const series = new Map<string, string[]>();
  for (const metric of await registry.getMetricsAsJSON()) {
    const instance = registry.getSingleMetric(metric.name) as unknown as { labelNames?: string[] };
    const labels = [...(instance.labelNames ?? []), ...TARGET_LABELS];
    if (String(metric.type) === 'histogram') {
      series.set(`${metric.name}_bucket`, [...labels, 'le']);
      series.set(`${metric.name}_sum`, labels);
      series.set(`${metric.name}_count`, labels);
    } else {
      series.set(metric.name, labels);
    }
  }
  series.set('up', TARGET_LABELS);
  return { series };
}

/** What an expression refers to that the service does not export. */
function unknownReferences(expression: string, { series }: Exported): string[] {
  const problems: string[] = [];
  const used = new Set<string>();
  // `name{matchers}` and bare `name`, skipping PromQL functions (followed by "(") and keywords;
  // label values and grouping clauses are taken out first.
  const selector = /\b([a-z_][a-z0-9_]*)\b\s*(\{[^}]*\})?(?!\s*\()/g;
  const grouping = /\b(?:by|on|without|ignoring)\s*\(([^)]*)\)/g;
  const keywords = new Set([
    'by',
    'on',
    'without',
    'ignoring',
    'and',
    'or',
    'unless',
    'bool',
    'group_left',
    'group_right',
    'offset',
  ]);
  for (const [, name = '', matchers] of expression
    .replaceAll(/"[^"]*"/g, '""')
    .replaceAll(grouping, ' ')
    .matchAll(selector)) {
    if (keywords.has(name) || /^\d/.test(name)) continue;
    const labels = series.get(name);
    if (!labels) {
      problems.push(`metric ${name}`);
      continue;
    }
    used.add(name);
    for (const [, label = ''] of (matchers ?? '').matchAll(/([a-z_][a-z0-9_]*)\s*(?:=~|!~|!=|=)/g)) {
      if (!labels.includes(label)) problems.push(`label ${label} of ${name}`);
    }
  }
  const known = new Set([...used].flatMap((name) => series.get(name) ?? []));
  for (const [, list = ''] of expression.matchAll(grouping)) {
    for (const label of list
      .split(',')
      .map((l) => l.trim())
      .filter(Boolean)) {
      if (!known.has(label)) problems.push(`grouping label ${label}`);
    }
  }
  return problems;
}

interface RuleFile {
  groups: { name: string; rules: { alert: string; expr: string }[] }[];
}

describe('the Prometheus alert rules', () => {
  it('name only metrics and labels the service exports', async () => {
    const metrics = await exported();
    const rules = (parse(read('deploy/prometheus/alerts.yml')) as RuleFile).groups.flatMap((g) => g.rules);
    expect(rules.length).toBeGreaterThan(10);
    const problems = rules.flatMap((rule) =>
      unknownReferences(rule.expr, metrics).map((problem) => `${rule.alert}: ${problem}`),
    );
    expect(problems).toEqual([]);
    // Every metric of the service's own is alerted on or documented as not worth an alert.
    const referenced = rules.map((rule) => rule.expr).join('\n');
    for (const name of ['sibyl_http_requests_total', 'sibyl_venue_calls_total', 'sibyl_refunds_total']) {
      expect(referenced).toContain(name);
    }
  });

  it('and their unit tests feed series of those metrics', async () => {
    const metrics = await exported();
    const tests = parse(read('deploy/prometheus/alerts.test.yml')) as {
      tests: { input_series: { series: string }[] }[];
    };
    const problems = tests.tests
      .flatMap((t) => t.input_series)
      .flatMap((input) => unknownReferences(input.series, metrics));
    expect(problems).toEqual([]);
  });

  it('the check itself finds a misspelt metric, an unknown label and a wrong grouping', async () => {
    const metrics = await exported();
    expect(unknownReferences('rate(sibyl_http_request_total[5m]) > 0', metrics)).toEqual([
      'metric sibyl_http_request_total',
    ]);
    expect(unknownReferences('sibyl_charges_total{venue="x"}', metrics)).toEqual([
      'label venue of sibyl_charges_total',
    ]);
    expect(
      unknownReferences('sum by (le, code) (rate(sibyl_charge_batch_size_bucket[5m]))', metrics),
    ).toEqual(['grouping label code']);
    expect(
      unknownReferences(
        'histogram_quantile(0.99, sum by (route, le) (rate(sibyl_http_request_duration_seconds_bucket[5m])))',
        metrics,
      ),
    ).toEqual([]);
  });
});
