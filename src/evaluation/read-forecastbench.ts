import { BODY_PATHS, checkQuestion, LIMITS } from '../ai/index.js';
import { countSkip, isRecord, type LabelledQuestion, type LabelledSet, setError } from './labelled-set.js';

/** The two outcomes every ForecastBench question is asked with: `resolved_to` 1 is Yes. */
const OUTCOMES = ['Yes', 'No'];

export interface JsonFile {
  name: string;
  value: Record<string, unknown>;
}

/**
 * A ForecastBench question set (`{ questions: [...] }`) with its resolution set
 * (`{ resolutions: [...] }`) — docs/ai.md#labelled-sets: one labelled question per binary
 * resolution (`resolved_to` 0 or 1 on a resolved question), the question's `{resolution_date}` and
 * `{forecast_due_date}` filled in, its resolution criteria and background as context, its `source`
 * as the category. Combination questions, unresolved or non-binary resolutions, and resolutions
 * without their question are skipped and counted.
 */
export function readForecastBench(questionSet: JsonFile, resolutionSet: JsonFile): LabelledSet {
  const questionsField = questionSet.value.questions;
  if (!Array.isArray(questionsField)) throw setError(questionSet.name, null, 'questions', 'must be an array');
  const resolutions = resolutionSet.value.resolutions;
  if (!Array.isArray(resolutions))
    throw setError(resolutionSet.name, null, 'resolutions', 'must be an array');
  const dueDate =
    typeof questionSet.value.forecast_due_date === 'string' ? questionSet.value.forecast_due_date : '';

  const byKey = new Map<string, Record<string, unknown>>();
  questionsField.forEach((q, i) => {
    if (!isRecord(q)) throw setError(questionSet.name, null, `questions[${i}]`, 'must be an object');
    if (Array.isArray(q.id)) return; // a combination: never asked on its own
    if (typeof q.id !== 'string' || typeof q.source !== 'string') {
      throw setError(
        questionSet.name,
        null,
        `questions[${i}].id`,
        'must be a string, with a string "source"',
      );
    }
    if (typeof q.question !== 'string') {
      throw setError(questionSet.name, null, `questions[${i}].question`, 'must be a string');
    }
    byKey.set(`${q.source}\u0000${q.id}`, q);
  });

  const questions: LabelledQuestion[] = [];
  const skipped: Record<string, number> = {};
  resolutions.forEach((r, i) => {
    const field = (f: string) => `resolutions[${i}].${f}`;
    if (!isRecord(r)) throw setError(resolutionSet.name, null, `resolutions[${i}]`, 'must be an object');
    if (Array.isArray(r.id)) {
      countSkip(skipped, 'combination');
      return;
    }
    if (typeof r.id !== 'string' || typeof r.source !== 'string') {
      throw setError(resolutionSet.name, null, field('id'), 'must be a string, with a string "source"');
    }
    if (r.resolved !== true) {
      countSkip(skipped, 'unresolved');
      return;
    }
    if (r.resolved_to !== 0 && r.resolved_to !== 1) {
      if (typeof r.resolved_to !== 'number') {
        throw setError(resolutionSet.name, null, field('resolved_to'), 'must be a number');
      }
      countSkip(skipped, 'not binary');
      return;
    }
    const q = byKey.get(`${r.source}\u0000${r.id}`);
    if (!q) {
      countSkip(skipped, 'no question');
      return;
    }
    const resolutionDate = typeof r.resolution_date === 'string' ? r.resolution_date : '';
    const fill = (text: string) =>
      text.replaceAll('{resolution_date}', resolutionDate).replaceAll('{forecast_due_date}', dueDate);
    const question = fill(q.question as string).trim();
    const context = [
      typeof q.resolution_criteria === 'string' ? `Resolution criteria: ${fill(q.resolution_criteria)}` : '',
      typeof q.background === 'string' && q.background !== 'N/A' ? `Background: ${fill(q.background)}` : '',
      resolutionDate ? `Resolution date: ${resolutionDate}` : '',
    ]
      .filter(Boolean)
      .join('\n\n')
      .slice(0, LIMITS.contextMaxChars);
    const [problem] = checkQuestion(
      { question, outcomes: OUTCOMES, context },
      { sandbox: false, paths: BODY_PATHS },
    );
    if (problem) {
      throw setError(questionSet.name, null, `question ${r.source}/${r.id}`, problem.message);
    }
    questions.push({
      id: `${r.source}/${r.id}${resolutionDate ? `@${resolutionDate}` : ''}`,
      question,
      outcomes: [...OUTCOMES],
      context,
      answer: r.resolved_to === 1 ? 0 : 1,
      category: r.source,
    });
  });
  return { format: 'forecastbench', questions, skipped };
}
