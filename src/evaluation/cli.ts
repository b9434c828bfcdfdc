import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createReadStream, createWriteStream, type Stats, statSync, type WriteStream } from 'node:fs';
import { rename, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, resolve } from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { AiConfig, SibylData } from '../ai/index.js';
import { DEFAULT_CONFIDENCE_THRESHOLD, decideConsensus, loadResolver } from '../ai/index.js';
import { createContext } from '../context.js';
import type { CommandIo } from '../feature.js';
import { storedPriceAt } from '../historical/index.js';
import { type Clock, systemClock } from '../lib/clock.js';
import { type CommandArgs, option, UsageError } from '../lib/command-line.js';
import { marketFacts } from '../markets/index.js';
import type { PriceConfig } from '../prices/index.js';
import { openAnswerCache } from './cache.js';
import { evaluateSet } from './evaluate.js';
import type { LabelledQuestion } from './labelled-set.js';
import { reportMarkdown } from './markdown.js';
import { createProgress, type ProgressSink } from './progress.js';
import { openLabelledSet } from './read-set.js';
import { reliabilitySvg } from './reliability-svg.js';
import { type Prices, questionLine, ReportTally } from './report.js';
import { publishScorecard } from './scorecard.js';
import { scorecardSummary } from './summary.js';

function integer(args: CommandArgs, name: string, fallback: number | undefined, min: number, max: number) {
  const text = option(args, name);
  if (text === undefined) return fallback;
  const n = Number(text);
  if (!/^\d+$/.test(text) || n < min || n > max)
    throw new UsageError(`--${name} takes a whole number from ${min} to ${max}`);
  return n;
}

/** `--prices openai/gpt-4.1-mini=0.4/1.6,…`: USD per million input and output tokens. */
function prices(text: string | undefined): Prices | undefined {
  if (text === undefined) return undefined;
  const map = new Map<string, { input: number; output: number }>();
  for (const part of text.split(',')) {
    const m = /^\s*([^=\s]+)=(\d+(?:\.\d+)?)\/(\d+(?:\.\d+)?)\s*$/.exec(part);
    if (!m) throw new UsageError('--prices takes MODEL=IN/OUT (USD per million tokens), comma-separated');
    map.set(m[1] as string, { input: Number(m[2]), output: Number(m[3]) });
  }
  return map;
}

/**
 * Sibyl's tools read the command's database (docs/ai.md#sibyls-tools), opened only when a model
 * first calls one: a run whose models call none never opens it.
 */
function sibylData(io: CommandIo<{ prices: PriceConfig }>, clock: Clock): SibylData {
  const rules = {
    outlierTolerance: io.config.prices.outlierTolerance,
    minSources: io.config.prices.minSources,
  };
  const ctx = async () => createContext(await io.database(), clock);
  return {
    price: async (symbol, at) => storedPriceAt(await ctx(), symbol, at, rules),
    market: async (id) => marketFacts(await ctx(), id),
  };
}

/** Writes a file whole or not at all: a temporary file renamed over it. */
async function writeWhole(path: string, text: string): Promise<void> {
  const temporary = `${path}.${randomUUID()}.tmp`;
  await writeFile(temporary, text);
  await rename(temporary, path);
}

async function write(stream: WriteStream, text: string): Promise<void> {
  if (!stream.write(text)) await once(stream, 'drain');
}

async function end(stream: WriteStream): Promise<void> {
  await new Promise<void>((resolve, reject) =>
    stream.end((err?: Error | null) => (err ? reject(err) : resolve())),
  );
}

/**
 * The JSON report written whole or not at all, as `JSON.stringify({ ...report, questions }, null, 2)`
 * would write it, its `questions` copied from the file they were written to one by one.
 */
async function writeJsonReport(path: string, report: object, questionsFile: string, count: number) {
  const temporary = `${path}.${randomUUID()}.tmp`;
  const head = JSON.stringify(report, null, 2);
  const stream = createWriteStream(temporary);
  await write(stream, `${head.slice(0, -2)},\n  "questions": [${count ? '\n' : ''}`);
  await pipeline(createReadStream(questionsFile), stream, { end: false });
  await write(stream, `${count ? '\n  ' : ''}]\n}\n`);
  await end(stream);
  await rename(temporary, path);
}

async function* firstOf<T>(
  items: Iterable<T> | AsyncIterable<T>,
  limit: number | undefined,
): AsyncGenerator<T> {
  if (limit === 0) return;
  let n = 0;
  for await (const item of items) {
    yield item;
    if (++n === limit) return;
  }
}

function withExtension(path: string, ext: string): string {
  return path.endsWith('.json') ? `${path.slice(0, -'.json'.length)}${ext}` : `${path}${ext}`;
}

function statOf(path: string): Stats | undefined {
  return statSync(path, { throwIfNoEntry: false });
}

/** Whether two paths name one file: the same path, or (both existing) the same file by another name. */
function sameFile(a: string, b: string): boolean {
  if (resolve(a) === resolve(b)) return true;
  const [x, y] = [statOf(a), statOf(b)];
  return x !== undefined && y !== undefined && x.dev === y.dev && x.ino === y.ino;
}

/**
 * The files the command writes, checked before anything is read or asked: none of them the set or
 * another of them (the cache replaced by the report, the set by either), each a file (not a folder)
 * in a folder that exists. Each of these had failed only after every model was asked, or not at all.
 */
function checkPaths(set: string[], writes: { option: string; path: string }[]): void {
  for (const [i, { option: name, path }] of writes.entries()) {
    for (const input of set)
      if (sameFile(path, input))
        throw new UsageError(`${name} ${path} is the labelled set: it would be overwritten`);
    for (const other of writes.slice(0, i))
      if (sameFile(path, other.path))
        throw new UsageError(`${name} ${path} is also ${other.option}: one would replace the other`);
    if (statOf(path)?.isDirectory()) throw new UsageError(`${name} ${path} is a folder: it names a file`);
    const folder = statOf(dirname(resolve(path)));
    if (!folder?.isDirectory())
      throw new UsageError(`${name} ${path}: the folder ${dirname(path)} does not exist`);
  }
}

/**
 * `sibyl ai evaluate`: reads the labelled set (all of it checked before anything is asked or
 * written), asks every question through the resolver, and writes the report as JSON, Markdown and
 * an SVG reliability diagram. Ctrl-C stops asking and writes the report of what was answered.
 */
export async function evaluateCommand(
  io: CommandIo<{ ai: AiConfig; prices: PriceConfig }>,
  args: CommandArgs,
  progressSink?: ProgressSink,
): Promise<boolean> {
  if (args.positionals.length === 0) throw new UsageError('missing PATH (a labelled set)');
  // Never live by default: live asks the four configured providers, at the operator's expense.
  const mode = option(args, 'models');
  if (mode !== 'live' && mode !== 'sandbox')
    throw new UsageError(
      `--models ${mode === undefined ? 'is required' : 'takes live or sandbox'}: live (the four configured ` +
        'providers, paid by the operator) or sandbox (the deterministic sandbox models, free)',
    );
  const limit = integer(args, 'limit', undefined, 1, 10_000_000);
  const concurrency = integer(args, 'concurrency', 8, 1, 1000) as number;
  const targetText = option(args, 'target');
  const target = targetText === undefined ? 0.97 : Number(targetText);
  if (!(target > 0 && target <= 1))
    throw new UsageError('--target takes a share above 0 and at most 1 (0.97)');
  const out = option(args, 'out') ?? 'ai-evaluation.json';
  const cachePath = option(args, 'cache') ?? 'sibyl-ai-cache.jsonl';
  const priceList = prices(option(args, 'prices'));
  const publish = args.options.publish === true;
  const search = option(args, 'search') ?? 'on';
  if (search !== 'on' && search !== 'off')
    throw new UsageError("--search takes on (the providers' own web search as configured) or off");
  const markdownPath = withExtension(out, '.md');
  const svgPath = withExtension(out, '.svg');
  checkPaths(args.positionals, [
    { option: '--cache', path: cachePath },
    { option: '--out', path: out },
    { option: '--out (its Markdown page)', path: markdownPath },
    { option: '--out (its diagram)', path: svgPath },
  ]);

  const set = await openLabelledSet(args.positionals);
  const total = limit === undefined ? set.count : Math.min(limit, set.count);
  const resolver = await loadResolver(io.config.ai, systemClock, sibylData(io, systemClock));
  resolver.requireAvailable(mode);
  // Opened before the run so that a database that cannot be reached fails first, not after it.
  const db = publish ? await io.database() : null;

  const stop = new AbortController();
  io.signal?.addEventListener('abort', () => stop.abort(), { once: true });
  const onSignal = () => stop.abort();
  process.once('SIGINT', onSignal);
  const sink: ProgressSink = progressSink ?? {
    tty: process.stderr.isTTY === true,
    write: (text) => process.stderr.write(text),
  };
  const progress = io.out.json ? null : createProgress(total, sink);
  const cache = await openAnswerCache(cachePath);
  const modelsUsed = resolver.models(mode).map((m) => m.name);
  // Each result is added to the tally and its line written out, then dropped: nothing per question
  // is kept (docs/ai.md#evaluating-a-large-set).
  const tally = new ReportTally(modelsUsed, DEFAULT_CONFIDENCE_THRESHOLD);
  const questionsFile = `${out}.${randomUUID()}.questions.tmp`;
  const lines = createWriteStream(questionsFile);
  const startedAt = new Date();
  let evaluation: Awaited<ReturnType<typeof evaluateSet>>;
  try {
    evaluation = await evaluateSet({
      resolver,
      mode,
      questions: firstOf<LabelledQuestion>(set.questions(), limit),
      concurrency,
      confidenceThreshold: DEFAULT_CONFIDENCE_THRESHOLD,
      cache,
      search,
      signal: stop.signal,
      onProgress: (done) => progress?.tick(done),
      onResult: async (result) => {
        const consensus = decideConsensus(result.votes, result.outcomes, DEFAULT_CONFIDENCE_THRESHOLD);
        const first = tally.evaluated === 0;
        tally.add(result, consensus);
        const line = JSON.stringify(questionLine(result, consensus), null, 2).replace(/\n/g, '\n    ');
        await write(lines, `${first ? '' : ',\n'}    ${line}`);
      },
    });
  } finally {
    process.off('SIGINT', onSignal);
    progress?.end();
    await cache.close();
    await end(lines);
  }

  const report = tally.report({
    set: { format: set.format, skipped: set.skipped, questions: { length: set.count } },
    mode,
    modelsUsed,
    confidenceThreshold: DEFAULT_CONFIDENCE_THRESHOLD,
    target,
    interrupted: evaluation.interrupted,
    startedAt,
    finishedAt: new Date(),
    cachedAnswers: evaluation.cachedAnswers,
    askedAnswers: evaluation.askedAnswers,
    search,
    ...(priceList ? { prices: priceList } : {}),
  });
  try {
    await writeJsonReport(out, report, questionsFile, report.evaluated);
  } finally {
    await rm(questionsFile, { force: true });
  }
  await writeWhole(svgPath, reliabilitySvg(report.reliability, 'Reliability of the consensus confidence'));
  await writeWhole(markdownPath, reportMarkdown(report, basename(svgPath)));

  let published: { id: string; publishedAt: string } | null = null;
  if (db && !report.interrupted) published = await publishScorecard(db, scorecardSummary(report));

  const pct = (v: number | null) => (v === null ? '—' : `${(v * 100).toFixed(1)}%`);
  io.out.result(
    {
      report: out,
      markdown: markdownPath,
      diagram: svgPath,
      interrupted: report.interrupted,
      evaluated: report.evaluated,
      accuracy: report.accuracy,
      coverage: report.coverage,
      recommendedThreshold: report.recommendedThreshold,
      published,
    },
    [
      `${report.interrupted ? 'Interrupted: ' : ''}${report.evaluated} of ${total} questions evaluated`,
      `accuracy ${pct(report.accuracy)} of ${report.determined} determined, coverage ${pct(report.coverage)}`,
      report.recommendedThreshold === null
        ? `no threshold reaches ${pct(target)}`
        : `lowest threshold reaching ${pct(target)}: ${report.recommendedThreshold.toFixed(2)}`,
      `report: ${out}, ${markdownPath}, ${svgPath}`,
      publish
        ? published
          ? `published as scorecard ${published.id}`
          : 'not published: an interrupted evaluation is not a scorecard'
        : '',
    ]
      .filter(Boolean)
      .join('\n'),
  );
  return !(publish && !published);
}
