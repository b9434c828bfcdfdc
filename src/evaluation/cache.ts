import { createHash } from 'node:crypto';
import { closeSync, createReadStream, openSync, readSync, writeSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { ResolutionQuestion, Vote } from '../ai/index.js';

/**
 * Failures that say nothing lasting about the question: a rerun asks those models again. Every
 * other answer — a vote, "cannot determine", an answer that broke the schema — is kept.
 */
const TRANSIENT = new Set([
  'timeout',
  'network',
  'rate_limited',
  'http_error',
  'not_configured',
  'abandoned',
]);

export function isCacheable(vote: Vote): boolean {
  return vote.error === null || !TRANSIENT.has(vote.error.kind);
}

/**
 * The key of one model's answer to one question: the model, everything it is sent of the question,
 * and whether its web search was on (`--search`), so that the answers of the two runs of a
 * comparison are kept apart. Keys of the default (`on`) are those written before `--search`
 * existed.
 */
export function cacheKey(model: string, question: ResolutionQuestion, search: 'on' | 'off' = 'on'): string {
  const parts: unknown[] = [model, question.question, question.outcomes, question.context];
  if (search === 'off') parts.push('search:off');
  return createHash('sha256').update(JSON.stringify(parts)).digest('base64url');
}

export interface AnswerCache {
  readonly path: string;
  get(key: string): Vote | undefined;
  put(key: string, vote: Vote): void;
  /** Closes the file (every answer put is already written); an answer put after it is dropped. */
  close(): Promise<void>;
}

/**
 * Where each answer's line is in the file, by key: an open-addressing table in typed arrays (the
 * key's first 8 bytes, the line's offset and length: 20 bytes an answer, no object per answer). A
 * lookup reads the line back and checks its whole key, so two keys sharing 8 bytes cost a re-ask,
 * never a wrong answer.
 */
class LineIndex {
  private hi = new Uint32Array(1024);
  private lo = new Uint32Array(1024);
  private offsets = new Float64Array(1024);
  private lengths = new Uint32Array(1024);
  private used = 0;

  private slot(hi: number, lo: number): number {
    const mask = this.hi.length - 1;
    let i = (lo ^ hi) & mask;
    while (this.lengths[i] !== 0 && (this.hi[i] !== hi || this.lo[i] !== lo)) i = (i + 1) & mask;
    return i;
  }

  get(key: Buffer): { offset: number; length: number } | undefined {
    const i = this.slot(key.readUInt32LE(0), key.readUInt32LE(4));
    const length = this.lengths[i] as number;
    return length === 0 ? undefined : { offset: this.offsets[i] as number, length };
  }

  set(key: Buffer, offset: number, length: number): void {
    if ((this.used + 1) * 2 > this.hi.length) this.grow();
    const hi = key.readUInt32LE(0);
    const lo = key.readUInt32LE(4);
    const i = this.slot(hi, lo);
    if (this.lengths[i] === 0) this.used++;
    this.hi[i] = hi;
    this.lo[i] = lo;
    this.offsets[i] = offset;
    this.lengths[i] = length;
  }

  private grow(): void {
    const { hi, lo, offsets, lengths } = this;
    const size = hi.length * 2;
    this.hi = new Uint32Array(size);
    this.lo = new Uint32Array(size);
    this.offsets = new Float64Array(size);
    this.lengths = new Uint32Array(size);
    for (let i = 0; i < hi.length; i++) {
      if (lengths[i] === 0) continue;
      const j = this.slot(hi[i] as number, lo[i] as number);
      this.hi[j] = hi[i] as number;
      this.lo[j] = lo[i] as number;
      this.offsets[j] = offsets[i] as number;
      this.lengths[j] = lengths[i] as number;
    }
  }
}

function parseLine(line: string): { k: string; vote: Vote } | null {
  try {
    const { k, vote } = JSON.parse(line) as { k: string; vote: Partial<Vote> & Pick<Vote, 'model'> };
    if (typeof k !== 'string' || !vote || typeof vote.model !== 'string') return null;
    // An answer cached before votes carried evidence: none, searches and search unknown, an
    // abstention's reason the general one (as src/ai/answer.ts reads an answer without it).
    const abstained = vote.error === null && vote.outcomeIndex === null;
    return {
      k,
      vote: {
        ...vote,
        evidence: vote.evidence ?? [],
        searches: vote.searches ?? null,
        search: vote.search ?? null,
        abstainReason: vote.abstainReason ?? (abstained ? 'insufficient_evidence' : null),
      } as Vote,
    };
  } catch {
    // A line cut short by a crash: that answer is asked again.
    return null;
  }
}

/** A key's bytes (a sha256); a key too short to be one (a damaged line) is never found. */
const keyBytes = (key: string) => {
  const bytes = Buffer.from(key, 'base64url');
  return bytes.length >= 8 ? bytes : null;
};

/**
 * Each model's answers, per model and question text (docs/ai.md#the-answer-cache): a JSON Lines
 * file appended to as answers arrive (each line written at once, so an interrupted run keeps every
 * answer it was given). At the start the file is scanned for where each line is, not kept: an
 * answer is read back from the file when its question comes, so a large cache costs 20 bytes an
 * answer in memory. A line cut short by a crash is ignored; of two lines with one key, the later counts.
 */
export async function openAnswerCache(path: string): Promise<AnswerCache> {
  await mkdir(dirname(path), { recursive: true });
  const fd = openSync(path, 'a+');
  const index = new LineIndex();
  let size = 0;
  let endsWithNewline = true;
  const stream = createReadStream(path, { fd, autoClose: false, start: 0 });
  let pending = Buffer.alloc(0);
  let pendingAt = 0;
  const addLine = (line: Buffer, offset: number) => {
    const entry = parseLine(line.toString('utf8'));
    const bytes = entry && keyBytes(entry.k);
    if (bytes) index.set(bytes, offset, line.length);
  };
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    let buffer = pending.length ? Buffer.concat([pending, chunk]) : chunk;
    let at = pendingAt;
    for (let newline = buffer.indexOf(10); newline !== -1; newline = buffer.indexOf(10)) {
      if (newline > 0) addLine(buffer.subarray(0, newline), at);
      at += newline + 1;
      buffer = buffer.subarray(newline + 1);
    }
    pending = Buffer.from(buffer);
    pendingAt = at;
    size += chunk.length;
    endsWithNewline = chunk[chunk.length - 1] === 10;
  }
  if (pending.length) addLine(pending, pendingAt);
  // A last line cut short: the next answer starts on a line of its own.
  if (!endsWithNewline) size += writeSync(fd, '\n');

  // A question abandoned at Ctrl-C may still get an answer after the cache is closed: it is not
  // written (its descriptor may by then be another file's).
  let open = true;
  return {
    path,
    get(key) {
      if (!open) return undefined;
      const bytes = keyBytes(key);
      const where = bytes && index.get(bytes);
      if (!where) return undefined;
      const line = Buffer.alloc(where.length);
      readSync(fd, line, 0, where.length, where.offset);
      const entry = parseLine(line.toString('utf8'));
      return entry && entry.k === key ? entry.vote : undefined;
    },
    put(key, vote) {
      if (!open) return;
      const line = Buffer.from(`${JSON.stringify({ k: key, vote })}\n`);
      writeSync(fd, line);
      const bytes = keyBytes(key);
      if (bytes) index.set(bytes, size, line.length - 1);
      size += line.length;
    },
    close: async () => {
      if (open) closeSync(fd);
      open = false;
    },
  };
}
