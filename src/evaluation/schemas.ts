import Type from 'typebox';
import { Timestamp } from '../http/schemas.js';

const Share = (description: string) =>
  Type.Union([Type.Number({ minimum: 0, maximum: 1 }), Type.Null()], {
    description: `${description}; a share 0–1, null when there is nothing to take it of`,
  });
const Count = (description: string) => Type.Integer({ minimum: 0, description });
const Ms = Type.Union([Type.Integer({ minimum: 0 }), Type.Null()]);

const AgreementFigures = Type.Object(
  {
    count: Count('Determined answers at this agreement'),
    accuracy: Share('Share of them that were right'),
  },
  { additionalProperties: false },
);

/** The published summary of an AI evaluation (docs/ai.md#the-published-scorecard). */
export const Scorecard = Type.Object(
  {
    publishedAt: Type.String({ ...Timestamp, description: 'When it was published (ISO 8601, UTC)' }),
    evaluatedAt: Type.String({ ...Timestamp, description: 'When the evaluation finished (ISO 8601, UTC)' }),
    set: Type.Object(
      {
        format: Type.Union([Type.Literal('jsonl'), Type.Literal('uma'), Type.Literal('forecastbench')], {
          description: 'The labelled set’s format: Sibyl’s JSON Lines, UMA proposals, or ForecastBench',
        }),
        questions: Count('Questions in the set'),
        skipped: Type.Record(Type.String(), Type.Integer({ minimum: 0 }), {
          description: 'Entries of the set left out, by reason (`50-50`, `unresolved`, …)',
        }),
      },
      { additionalProperties: false },
    ),
    mode: Type.Union([Type.Literal('live'), Type.Literal('sandbox')], {
      description: 'Which models were asked',
    }),
    modelsUsed: Type.Array(Type.String(), {
      description: 'The four models, `<provider>/<model>`, in slot order',
    }),
    confidenceThreshold: Type.Number({ description: 'The threshold `canDetermine` used (the default 0.75)' }),
    target: Type.Number({ description: 'The target accuracy the threshold table was read against' }),
    evaluated: Count('Questions answered by the resolver'),
    determined: Count('Of them, resolutions with `canDetermine: true`'),
    accuracy: Share('Share of the determined answers that were right'),
    coverage: Share('Share of the questions determined'),
    byAgreement: Type.Object(
      { '4/4': AgreementFigures, '3/4': AgreementFigures },
      {
        additionalProperties: false,
        description: 'Determined answers by how many of the four models agreed',
      },
    ),
    byModel: Type.Record(
      Type.String(),
      Type.Object(
        {
          answered: Count('Questions the model answered validly (a vote or "cannot determine")'),
          accuracy: Share('Share of those it answered right'),
          abstained: Count('Valid answers of "cannot determine"'),
          failed: Count('Questions it gave no valid answer to (timeouts, errors, malformed answers)'),
        },
        { additionalProperties: false },
      ),
      { description: 'Each model on its own, by `<provider>/<model>`' },
    ),
    byCategory: Type.Record(
      Type.String(),
      Type.Object(
        {
          questions: Count('Questions of the category'),
          determined: Count('Of them, determined'),
          coverage: Share('Share determined'),
          accuracy: Share('Share of the determined ones that were right'),
        },
        { additionalProperties: false },
      ),
    ),
    brier: Share('Brier score of the consensus confidence (0 is perfect)'),
    ece: Share('Expected calibration error of the consensus confidence, over ten bins'),
    calibrated: Count(
      'Completed resolutions that named a winner: what `brier`, `ece` and `reliability` are over',
    ),
    reliability: Type.Array(
      Type.Object(
        {
          from: Type.Number(),
          to: Type.Number(),
          count: Count('Answers whose consensus confidence is in [from, to)'),
          confidence: Share('Their mean confidence'),
          accuracy: Share('Share of their winners that were right'),
        },
        { additionalProperties: false },
      ),
      { description: 'The reliability diagram’s ten bins' },
    ),
    abstentions: Type.Object(
      {
        count: Count('Questions not determined'),
        reasons: Type.Object(
          {
            failed: Count('Fewer than 3 valid answers'),
            no_outcome: Count('No model voted for an outcome'),
            split: Count('Fewer than 3 of the 4 agreed'),
            low_confidence: Count('3 or 4 agreed below the confidence threshold'),
          },
          { additionalProperties: false },
        ),
      },
      { additionalProperties: false },
    ),
    latencyMs: Type.Object(
      { p50: Ms, p99: Ms },
      {
        additionalProperties: false,
        description: 'A resolution’s time (its slowest model), median and 99th percentile',
      },
    ),
    thresholds: Type.Array(
      Type.Object(
        {
          threshold: Type.Number(),
          determined: Count('Questions determined at this threshold'),
          coverage: Share('Share determined'),
          accuracy: Share('Share of those right'),
        },
        { additionalProperties: false },
      ),
      { description: 'Coverage and accuracy at each threshold from 0.50 to 0.95' },
    ),
    recommendedThreshold: Type.Union([Type.Number(), Type.Null()], {
      description: 'The lowest threshold whose accuracy reaches `target`; null when none does',
    }),
  },
  { description: 'The latest published AI scorecard' },
);
