import { BODY_PATHS, checkQuestion, LIMITS } from '../ai/index.js';
import {
  countSkip,
  isRecord,
  type LabelledQuestion,
  type LabelledSet,
  parseJsonFile,
  setError,
} from './labelled-set.js';

/** UMA's price for "yes"/p2 and for 50-50, in its 18-decimal fixed point. */
const ONE = 10n ** 18n;

/**
 * A folder of UMA Optimistic Truth Bot proposal files (`questionId_*.json`, each an array of
 * proposals — docs/ai.md#labelled-sets): the question is the title of `ancillary_data` and its
 * description the context; the outcomes are what `resolution_conditions` says p1 and p2 stand for;
 * the answer is `resolved_price_outcome` (or `resolved_price`). 50-50, too-early and unresolved
 * proposals are skipped and counted.
 */
export function readUmaProposals(files: readonly { name: string; text: string }[]): LabelledSet {
  const questions: LabelledQuestion[] = [];
  const skipped: Record<string, number> = {};
  const seen = new Set<string>();
  for (const { name, text } of files) {
    const value = parseJsonFile(name, text);
    const proposals = Array.isArray(value) ? value : [value];
    proposals.forEach((proposal, i) => {
      const field = (f: string) => (Array.isArray(value) ? `[${i}].${f}` : f);
      if (!isRecord(proposal)) throw setError(name, null, field('') || null, 'is not a proposal object');
      const read = readProposal(name, proposal, field);
      if (typeof read === 'string') {
        countSkip(skipped, read);
        return;
      }
      if (seen.has(read.id)) {
        countSkip(skipped, 'duplicate');
        return;
      }
      seen.add(read.id);
      questions.push(read);
    });
  }
  if (questions.length === 0 && Object.keys(skipped).length === 0) {
    throw setError(files[0]?.name ?? 'folder', null, null, 'holds no proposals');
  }
  return { format: 'uma', questions, skipped };
}

function readProposal(
  file: string,
  proposal: Record<string, unknown>,
  field: (name: string) => string,
): LabelledQuestion | string {
  const fail = (f: string, message: string) => setError(file, null, field(f), message);
  const ancillary = proposal.ancillary_data;
  if (typeof ancillary !== 'string') throw fail('ancillary_data', 'must be a string');
  const conditions = proposal.resolution_conditions;
  if (typeof conditions !== 'string') throw fail('resolution_conditions', 'must be a string');

  const text = ancillary.replace(/^\s*q:\s*/, '');
  const titled = /^title:\s*([\s\S]*?),\s*description:\s*([\s\S]*)$/.exec(text);
  const title = (titled?.[1] ?? text).trim();
  const description = (titled?.[2] ?? '').replace(/\s*res_data:[\s\S]*$/, '').trim();
  if (!title) throw fail('ancillary_data', 'has no question (no "title:")');

  const prices = new Map<string, string>();
  for (const m of conditions.matchAll(/\b(p\d)\s*:\s*(\d+(?:\.\d+)?)/g))
    prices.set(m[1] as string, m[2] as string);
  const labels = /Where p1 corresponds to (.+?), p2 to (.+?)(?:, p3 to (.+?))?\.?\s*$/.exec(conditions);
  if (!labels || prices.get('p1') === undefined || prices.get('p2') === undefined) {
    throw fail('resolution_conditions', 'does not say what p1 and p2 stand for');
  }
  const outcomes = [(labels[1] as string).trim(), (labels[2] as string).trim()];

  const answer = answerOf(proposal, prices, fail);
  if (typeof answer === 'string') return answer;

  // A title over the API's limit is asked whole, as context, behind a shortened question.
  const long = [...title].length > LIMITS.questionMaxChars;
  const question = long ? `${[...title].slice(0, LIMITS.questionMaxChars - 1).join('')}…` : title;
  const context = [long ? `Full question: ${title}` : '', description]
    .filter(Boolean)
    .join('\n\n')
    .slice(0, LIMITS.contextMaxChars);
  const [problem] = checkQuestion({ question, outcomes, context }, { sandbox: false, paths: BODY_PATHS });
  if (problem) {
    throw fail(
      problem.path.startsWith('body.outcomes') ? 'resolution_conditions' : 'ancillary_data',
      problem.message,
    );
  }
  const tags = proposal.tags;
  const category =
    Array.isArray(tags) && typeof tags[0] === 'string' && tags[0].trim() ? tags[0].trim() : 'uncategorised';
  const id = typeof proposal.query_id === 'string' ? proposal.query_id : file;
  return { id, question, outcomes, context, answer, category };
}

/** A decimal price of `resolution_conditions` ("0.5") in UMA's 18-decimal fixed point. */
function fixed18(text: string): bigint {
  const [whole = '0', fraction = ''] = text.split('.');
  return BigInt(whole || '0') * ONE + BigInt(`${fraction}${'0'.repeat(18)}`.slice(0, 18));
}

/** The index of the answer (p1 → 0, p2 → 1), or why the proposal is skipped. */
function answerOf(
  proposal: Record<string, unknown>,
  prices: ReadonlyMap<string, string>,
  fail: (field: string, message: string) => Error,
): number | string {
  let outcome = proposal.resolved_price_outcome;
  if (outcome === null || outcome === undefined) {
    const price = proposal.resolved_price;
    if (price === null || price === undefined) return 'unresolved';
    let value: bigint;
    try {
      value = BigInt(
        typeof price === 'number' ? price.toLocaleString('en', { useGrouping: false }) : String(price),
      );
    } catch {
      throw fail('resolved_price', 'must be an integer');
    }
    outcome = [...prices].find(([, p]) => fixed18(p) === value)?.[0];
    if (outcome === undefined) return 'unknown answer';
  }
  if (typeof outcome !== 'string') throw fail('resolved_price_outcome', 'must be a string like "p2"');
  if (outcome === 'p1') return 0;
  if (outcome === 'p2') return 1;
  if (prices.get(outcome) === '0.5') return '50-50';
  return 'unknown answer';
}
