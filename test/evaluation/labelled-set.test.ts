import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { AppError } from '../../src/errors.js';
import { readLabelledSet } from '../../src/evaluation/read-set.js';

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));
const SIBYL_SET = here('./sets/sibyl.jsonl');
const UMA = here('./fixtures/uma');
const FB = here('./fixtures/forecastbench');

async function tempFile(name: string, text: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'sibyl-set-'));
  const path = join(dir, name);
  await writeFile(path, text);
  return path;
}

async function failure(paths: string[]): Promise<AppError> {
  const err = await readLabelledSet(paths).then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AppError);
  return err as AppError;
}

describe('the project’s own JSON Lines set', () => {
  it('reads 44 questions in six categories, answers by label resolved to indexes, four to abstain on', async () => {
    const set = await readLabelledSet([SIBYL_SET]);
    expect(set.format).toBe('jsonl');
    expect(set.questions).toHaveLength(44);
    const categories = new Map<string, number>();
    for (const q of set.questions) categories.set(q.category, (categories.get(q.category) ?? 0) + 1);
    expect(Object.fromEntries(categories)).toEqual({
      'crypto-prices': 8,
      sports: 9,
      politics: 8,
      weather: 7,
      'on-chain': 8,
      undeterminable: 4,
    });
    expect(set.questions.filter((q) => q.answer === null).map((q) => q.id)).toEqual([
      'q41',
      'q42',
      'q43',
      'q44',
    ]);
    // "South Africa" is outcome 0 of four; "840,000" is outcome 1; "No" of Yes/No is 1.
    expect(set.questions.find((q) => q.id === 'q12')).toMatchObject({
      answer: 0,
      outcomes: expect.any(Array),
    });
    expect(set.questions.find((q) => q.id === 'q36')?.answer).toBe(1);
    expect(set.questions.find((q) => q.id === 'q04')).toMatchObject({
      answer: 1,
      context: 'Coinbase, Bitstamp or Kraken USD spot prices.',
    });
    expect(set.questions.find((q) => q.id === 'q01')?.context).toBe('');
    expect(set.skipped).toEqual({});
  });

  it('takes an index, a label in another case, blank lines, and a missing category', async () => {
    const path = await tempFile(
      'set.jsonl',
      [
        '{"id":1,"question":"Q one?","outcomes":["Yes","No"],"answer":1}',
        '',
        '{"id":"b","question":"Q two?","outcomes":["Up","Down"],"answer":"down","category":"prices"}',
      ].join('\n'),
    );
    const set = await readLabelledSet([path]);
    expect(set.questions).toEqual([
      {
        id: '1',
        question: 'Q one?',
        outcomes: ['Yes', 'No'],
        context: '',
        answer: 1,
        category: 'uncategorised',
      },
      { id: 'b', question: 'Q two?', outcomes: ['Up', 'Down'], context: '', answer: 1, category: 'prices' },
    ]);
  });

  it.each([
    [
      '{"id":"c","question":"Q?","outcomes":["Yes"],"answer":0}',
      'outcomes',
      'must list 2 to 20 outcomes (got 1)',
    ],
    [
      '{"id":"c","question":"Q?","outcomes":["Yes","No"],"answer":"Maybe"}',
      'answer',
      '"Maybe" is not one of the outcomes',
    ],
    [
      '{"id":"c","question":"Q?","outcomes":["Yes","No"],"answer":2}',
      'answer',
      'must be an outcome index from 0 to 1 (got 2)',
    ],
    ['{"id":"c","question":"Q?","outcomes":["Yes","No"]}', 'answer', 'is missing'],
    ['{"id":"c","question":"  ","outcomes":["Yes","No"],"answer":0}', 'question', 'must not be blank'],
    [
      '{"id":"c","question":"Q?","outcomes":["Yes","yes"],"answer":0}',
      'outcomes[1]',
      'repeats outcome 0 (labels must be distinct)',
    ],
    ['{"id":"a","question":"Q?","outcomes":["Yes","No"],"answer":0}', 'id', 'repeats the id of line 1'],
    ['{"id":"c","question":"Q?","outcomes":["Yes","No"],"answer":0', null, 'is not a JSON object'],
  ])('line 3 %s → an error naming line 3 and the field', async (line, field, message) => {
    const path = await tempFile(
      'bad.jsonl',
      [
        '{"id":"a","question":"Q1?","outcomes":["Yes","No"],"answer":0}',
        '{"id":"b","question":"Q2?","outcomes":["Yes","No"],"answer":1}',
        line,
      ].join('\n'),
    );
    const err = await failure([path]);
    expect(err.code).toBe('VALIDATION_ERROR');
    expect(err.message).toBe(`${path}, line 3${field ? `, "${field}"` : ''}: ${message}`);
    expect(err.details).toEqual({ file: path, line: 3, ...(field ? { field } : {}) });
  });

  it('an empty file, a missing file and a folder without a set are errors', async () => {
    const empty = await tempFile('empty.jsonl', '\n\n');
    expect((await failure([empty])).message).toBe(`${empty}: holds no questions`);
    expect((await failure([`${empty}.nope`])).message).toBe(`${empty}.nope: no such file or folder`);
    const dir = join(await tempFile('notes.txt', 'hello'), '..');
    expect((await failure([dir])).message).toMatch(/holds no labelled set/);
  });
});

describe('a folder of UMA Optimistic Truth Bot proposals', () => {
  it('reads the resolved proposals, skips and counts 50-50 and unresolved ones', async () => {
    const set = await readLabelledSet([UMA]);
    expect(set.format).toBe('uma');
    expect(set.skipped).toEqual({ '50-50': 1, unresolved: 1 });
    expect(set.questions.map((q) => [q.question, q.outcomes, q.answer, q.category])).toEqual([
      ['Butler vs. Providence', ['Providence', 'Butler'], 1, 'Sports'],
      ['Will Bitcoin reach $100,000 in February?', ['No', 'Yes'], 1, 'Crypto'],
      // No resolved_price_outcome: the resolved price 0 is p1.
      ['Will the Fed cut rates in March 2025?', ['No', 'Yes'], 0, 'Politics'],
    ]);
    expect(set.questions[0]?.id).toBe('0x025eb1bef9aa6a79a2d2e3a77ba937e8198cbd1debb6a0da38925898e9fb29ba');
    expect(set.questions[0]?.context).toMatch(/^In the upcoming CBB game, scheduled for March 12/);
  });

  it('one proposal file alone is read by its content', async () => {
    const set = await readLabelledSet([join(UMA, 'questionId_3a4eb4fc.json')]);
    expect(set.questions).toHaveLength(1);
  });

  it('a proposal without resolution conditions, or not JSON, is an error naming the file and field', async () => {
    const path = await tempFile(
      'questionId_00000001.json',
      JSON.stringify(
        [{ ancillary_data: 'q: title: T?, description: D', resolution_conditions: 'none' }],
        null,
        2,
      ),
    );
    const err = await failure([join(path, '..')]);
    expect(err.message).toBe(`${path}, "[0].resolution_conditions": does not say what p1 and p2 stand for`);
    await writeFile(path, '[\n  {\n    "ancillary_data": "q: title: T?",\n    oops\n  }\n]');
    expect((await failure([join(path, '..')])).message).toBe(`${path}, line 4: is not valid JSON`);
  });
});

describe('a ForecastBench question set with its resolution set', () => {
  const expected = [
    [
      'polymarket/0x3f2b8e@2024-07-28',
      'Will Joe Biden be the Democratic nominee for the 2024 US presidential election?',
      1,
    ],
    [
      'fred/DFF@2024-07-28',
      'Will the federal funds effective rate have increased by 2024-07-28 as compared to its value on 2024-07-21?',
      1,
    ],
    [
      'fred/DFF@2024-08-20',
      'Will the federal funds effective rate have increased by 2024-08-20 as compared to its value on 2024-07-21?',
      1,
    ],
  ];

  it('reads the folder: binary resolutions, dates filled in; combinations, unresolved and orphans skipped', async () => {
    const set = await readLabelledSet([FB]);
    expect(set.format).toBe('forecastbench');
    expect(set.questions.map((q) => [q.id, q.question, q.answer])).toEqual(expected);
    expect(set.questions[0]).toMatchObject({ outcomes: ['Yes', 'No'], category: 'polymarket' });
    expect(set.questions[1]?.context).toBe(
      'Resolution criteria: Resolves using the value of DFF published by FRED.\n\nBackground: The federal funds effective rate.\n\nResolution date: 2024-07-28',
    );
    expect(set.skipped).toEqual({ combination: 1, unresolved: 1, 'no question': 1 });
  });

  it('reads the two files given in either order, or the resolution set alone (it names its question set)', async () => {
    const questions = join(FB, '2024-07-21-llm.json');
    const resolutions = join(FB, '2024-07-21_resolution_set.json');
    for (const paths of [[questions, resolutions], [resolutions, questions], [resolutions]]) {
      const set = await readLabelledSet(paths);
      expect(set.questions.map((q) => q.id)).toEqual(expected.map((e) => e[0]));
    }
    expect((await failure([questions])).message).toMatch(
      /needs both its question set and its resolution set/,
    );
  });

  it('a resolution whose resolved_to is not a number is an error naming it', async () => {
    const questions = join(FB, '2024-07-21-llm.json');
    const path = await tempFile(
      'res.json',
      JSON.stringify({ resolutions: [{ id: 'DFF', source: 'fred', resolved: true, resolved_to: 'yes' }] }),
    );
    expect((await failure([questions, path])).message).toBe(
      `${path}, "resolutions[0].resolved_to": must be a number`,
    );
  });
});
