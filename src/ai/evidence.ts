/**
 * The evidence of a vote (docs/ai.md#evidence): what a model looked at — a provider's web citation,
 * or a call of one of Sibyl's own tools and what Sibyl answered. Everything in it came from a
 * provider, so it is untrusted data: checked and capped here, at the boundary, before it is stored,
 * and never fetched or put into another model's prompt.
 */

/** Why a model answered "cannot determine": the vote's and, when 3 agree, the result's `abstainReason`. */
export const ABSTAIN_REASONS = ['too_early', 'insufficient_evidence', 'ambiguous'] as const;
export type AbstainReason = (typeof ABSTAIN_REASONS)[number];

/** Sibyl’s own tools a model may call, as their calls appear in evidence (docs/ai.md#evidence). */
export const SIBYL_TOOLS = ['sibyl_price', 'sibyl_market'] as const;
export type SibylTool = (typeof SIBYL_TOOLS)[number];

export const EVIDENCE_LIMITS = {
  /** Items kept per vote, in the order the model used them; later ones are dropped and counted. */
  items: 10,
  urlChars: 2048,
  titleChars: 300,
  quoteChars: 500,
  /** The JSON of a tool call's input, and of Sibyl's answer, each. */
  toolJsonChars: 4000,
} as const;

export interface WebEvidence {
  kind: 'web';
  url: string;
  title: string;
  /** The cited text, where the provider gives one. */
  quote: string | null;
  /** When the provider retrieved it, or else when Sibyl received the answer citing it. */
  retrievedAt: string;
}

export interface SibylEvidence {
  kind: 'sibyl';
  tool: SibylTool;
  input: Record<string, unknown>;
  output: Record<string, unknown>;
}

export type Evidence = WebEvidence | SibylEvidence;

/** Why an item a provider gave was not kept: counted in `sibyl_ai_evidence_dropped_total`. */
export type DropReason = 'url' | 'malformed' | 'over_limit';

export interface CheckedEvidence {
  evidence: Evidence[];
  dropped: Partial<Record<DropReason, number>>;
}

/**
 * Characters PostgreSQL cannot store in text (NUL) and the other C0 and C1 controls except tab and
 * the line breaks: a quote keeps its lines, never a control sequence.
 */
const CONTROLS = /(?![\t\n\r])\p{Cc}/gu;

/** `text` made storable (no controls, no lone surrogates) and cut to `max` characters (code points). */
function cleanText(text: string, max: number): string {
  const clean = text.replace(CONTROLS, '').toWellFormed();
  const chars = [...clean];
  return chars.length > max ? chars.slice(0, max).join('') : clean;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** An http(s) URL with a host, at most EVIDENCE_LIMITS.urlChars once normalised; null otherwise. */
export function evidenceUrl(value: unknown): string | null {
  if (typeof value !== 'string' || value.length > EVIDENCE_LIMITS.urlChars) return null;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return null;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return null;
  if (url.hostname === '' || url.username !== '' || url.password !== '') return null;
  return url.href.length <= EVIDENCE_LIMITS.urlChars ? url.href : null;
}

function isoTime(value: unknown): string | null {
  if (typeof value !== 'string' && !(value instanceof Date)) return null;
  const time = new Date(value).getTime();
  return Number.isFinite(time) ? new Date(time).toISOString() : null;
}

/** Plain JSON data with every string made storable (cleanText); objects and arrays rebuilt. */
function cleanJson(value: unknown): unknown {
  if (typeof value === 'string') return cleanText(value, Number.MAX_SAFE_INTEGER);
  if (Array.isArray(value)) return value.map(cleanJson);
  if (isRecord(value)) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [cleanText(k, 200), cleanJson(v)]));
  }
  return value;
}

function toolJson(value: unknown): Record<string, unknown> | null {
  if (!isRecord(value)) return null;
  let json: string | undefined;
  try {
    json = JSON.stringify(value);
  } catch {
    return null;
  }
  if (json === undefined || json.length > EVIDENCE_LIMITS.toolJsonChars) return null;
  // Through JSON and back: plain data only (no undefined, no class instances), storable as jsonb.
  return cleanJson(JSON.parse(json)) as Record<string, unknown>;
}

function checkItem(item: unknown, receivedAt: Date): Evidence | DropReason {
  if (!isRecord(item)) return 'malformed';
  if (item.kind === 'web') {
    const url = evidenceUrl(item.url);
    if (url === null) return 'url';
    const title = typeof item.title === 'string' ? cleanText(item.title, EVIDENCE_LIMITS.titleChars) : '';
    const quote =
      typeof item.quote === 'string' && item.quote.trim() !== ''
        ? cleanText(item.quote, EVIDENCE_LIMITS.quoteChars)
        : null;
    const retrievedAt = isoTime(item.retrievedAt) ?? receivedAt.toISOString();
    return { kind: 'web', url, title, quote, retrievedAt };
  }
  if (item.kind === 'sibyl') {
    if (!SIBYL_TOOLS.includes(item.tool as SibylTool)) return 'malformed';
    const input = toolJson(item.input);
    const output = toolJson(item.output);
    if (input === null || output === null) return 'malformed';
    return { kind: 'sibyl', tool: item.tool as SibylTool, input, output };
  }
  return 'malformed';
}

/**
 * A provider's evidence as stored: each item checked (http(s) URLs of at most 2,048 characters,
 * quotes cut to 500 characters, titles to 300), at most 10 kept in the order given; everything else
 * dropped and counted by reason. Never throws: whatever a provider sent, the vote stands.
 */
export function checkEvidence(items: readonly unknown[] | undefined, receivedAt: Date): CheckedEvidence {
  const evidence: Evidence[] = [];
  const dropped: Partial<Record<DropReason, number>> = {};
  const drop = (reason: DropReason) => {
    dropped[reason] = (dropped[reason] ?? 0) + 1;
  };
  for (const item of items ?? []) {
    const checked = checkItem(item, receivedAt);
    if (typeof checked === 'string') drop(checked);
    else if (evidence.length >= EVIDENCE_LIMITS.items) drop('over_limit');
    else evidence.push(checked);
  }
  return { evidence, dropped };
}
