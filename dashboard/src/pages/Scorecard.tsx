import { type Answer, ApiError, api, type Mode, ok } from '../api';
import { Card, ErrorNote, num, Stat, Table } from '../components/ui';
import { useData } from '../data';
import { when } from '../format';

type ScorecardView = Answer<'dashboardGetAiScorecard'>;

const pct = (share: number | null) => (share === null ? '—' : `${(share * 100).toFixed(1)}%`);

/**
 * The operator's published AI scorecard of the mode (docs/ai.md#the-published-scorecard), beside the
 * account's AI requests: how often the resolver was right on a labelled set, at which threshold, and
 * on which models (a sandbox evaluation is never the live page's).
 */
export function Scorecard({ mode }: { mode: Mode }) {
  const card = useData(
    () =>
      ok(api.GET('/dashboard/api/{mode}/ai/scorecard', { params: { path: { mode } } })).catch(
        (err: unknown) => {
          if (err instanceof ApiError && err.code === 'NOT_FOUND') return null;
          throw err;
        },
      ),
    [mode],
  );
  return (
    <Card title="AI scorecard">
      <ErrorNote error={card.error} />
      {card.data === null && !card.error && <p class="muted">No scorecard has been published yet.</p>}
      {card.data && <Figures card={card.data} />}
    </Card>
  );
}

function Figures({ card }: { card: ScorecardView }) {
  return (
    <>
      <p>
        Measured on the {card.mode} models: {card.modelsUsed.join(', ')}
        {card.mode === 'sandbox'
          ? ' — deterministic stand-ins, not the live providers: these figures say nothing of live answers.'
          : '.'}
      </p>
      <p class="muted">
        {card.evaluated} questions ({card.set.format} set), evaluated {when(card.evaluatedAt)} at confidence
        threshold {card.confidenceThreshold}.
      </p>
      <div class="stats">
        <Stat label="Accuracy" value={pct(card.accuracy)} note={`of ${card.determined} determined`} />
        <Stat label="Coverage" value={pct(card.coverage)} note="share determined" />
        <Stat
          label="At 4/4 agreement"
          value={pct(card.byAgreement['4/4'].accuracy)}
          note={`${card.byAgreement['4/4'].count} answers`}
        />
        <Stat
          label="At 3/4 agreement"
          value={pct(card.byAgreement['3/4'].accuracy)}
          note={`${card.byAgreement['3/4'].count} answers`}
        />
        <Stat
          label="Brier score"
          value={card.brier === null ? '—' : card.brier.toFixed(3)}
          note="0 is perfect"
        />
      </div>
      <p>
        {card.recommendedThreshold === null
          ? `No threshold from 0.50 to 0.95 reaches ${pct(card.target)} accuracy.`
          : `Lowest threshold reaching ${pct(card.target)} accuracy: ${card.recommendedThreshold.toFixed(2)}.`}
      </p>
      <Table label="Thresholds" columns={[num('Threshold'), num('Coverage'), num('Accuracy')]}>
        {card.thresholds.map((row) => (
          <tr key={row.threshold}>
            <td class="num">{row.threshold.toFixed(2)}</td>
            <td class="num">{pct(row.coverage)}</td>
            <td class="num">{pct(row.accuracy)}</td>
          </tr>
        ))}
      </Table>
    </>
  );
}
