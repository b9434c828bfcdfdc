import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Marked } from 'marked';
import { getHeadingList, gfmHeadingId } from 'marked-gfm-heading-id';
import { describe, expect, it } from 'vitest';

/**
 * The contract lives in the repository (docs/architecture.md#citing-the-contract): a comment or a
 * document states a rule by citing `docs/<topic>.md#anchor`, and every such anchor is a heading of
 * that document, with the ids /docs/guides gives its headings (GitHub's, `marked-gfm-heading-id`).
 * Nothing cites the design or specification documents that are not in the repository.
 */

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const DOCS = join(ROOT, 'docs');

/** The folders (and files) whose text is checked; built output and dependencies are not. */
const CHECKED = [
  'src',
  'docs',
  'client/src',
  'client/test',
  'client/README.md',
  'dashboard/src',
  'dashboard/test',
  'scripts',
  'bench',
  'test',
  'README.md',
  'deploy',
];
const SKIPPED_DIRS = new Set(['node_modules', 'dist', 'generated']);
const TEXT = /\.(ts|tsx|js|mjs|cjs|md|sql|json|ya?ml|sh|css|html)$/;

function filesUnder(path: string): string[] {
  let stat: ReturnType<typeof statSync>;
  try {
    stat = statSync(path);
  } catch {
    return [];
  }
  if (!stat.isDirectory()) return TEXT.test(path) ? [path] : [];
  return readdirSync(path).flatMap((name) => (SKIPPED_DIRS.has(name) ? [] : filesUnder(join(path, name))));
}

const THIS_FILE = 'test/docs-citations.test.ts';

const FILES = CHECKED.flatMap((entry) => filesUnder(join(ROOT, entry)))
  // Recorded answers, lock files and the verbatim old texts of migrations (whose checksums earlier
  // releases recorded; test/db/migrate.test.ts) are data, not prose; this file's own examples are not
  // citations.
  .filter((path) => !/openapi-examples\.json$|package-lock\.json$|test\/db\/legacy-migrations\//.test(path))
  .filter((path) => relative(ROOT, path).split(sep).join('/') !== THIS_FILE)
  .map((path) => ({ path: relative(ROOT, path).split(sep).join('/'), text: readFileSync(path, 'utf8') }));

/** The heading ids of each document in docs/, as /docs/guides renders them. */
function headingIds(): Map<string, Set<string>> {
  const ids = new Map<string, Set<string>>();
  for (const file of readdirSync(DOCS).filter((name) => name.endsWith('.md'))) {
    const marked = new Marked({ gfm: true });
    marked.use(gfmHeadingId());
    const text = readFileSync(join(DOCS, file), 'utf8');
    marked.parse(text);
    const explicit = [...text.matchAll(/<a id="([\w-]+)"><\/a>/g)].map((match) => match[1] as string);
    ids.set(file, new Set([...getHeadingList().map((heading) => heading.id), ...explicit]));
  }
  return ids;
}

interface Citation {
  where: string;
  doc: string;
  anchor: string;
}

/** `docs/x.md#anchor` anywhere; within docs/ also the relative links `(x.md#anchor)`. */
function citationsIn(file: { path: string; text: string }): Citation[] {
  const found: Citation[] = [];
  const lines = file.text.split('\n');
  lines.forEach((line, index) => {
    const where = `${file.path}:${index + 1}`;
    for (const match of line.matchAll(/(?<![\w/.-])(?:\.\.\/)*docs\/([\w-]+\.md)#([\w-]+)/g)) {
      found.push({ where, doc: match[1] as string, anchor: match[2] as string });
    }
    if (file.path.startsWith('docs/')) {
      for (const match of line.matchAll(/\]\((?:\.\/)?([\w-]+\.md)?#([\w-]+)\)/g)) {
        const doc = match[1] ?? file.path.slice('docs/'.length);
        found.push({ where, doc, anchor: match[2] as string });
      }
    }
  });
  return found;
}

/** The ways of citing what is not in the repository. */
const OUTSIDE =
  /\b(?:DESIGN|spec)\s*§|\bproviders\.md\b|\breliability\.md\b|\bservice-spec\b|\bDESIGN\.md\b|(?:\.\.\/|\b)shared\/(?:spec|reference|DESIGN|STYLE)/i;

describe('citations of the contract', () => {
  it('finds the citations it checks (the scan is not empty)', () => {
    const all = FILES.flatMap(citationsIn);
    expect(all.length).toBeGreaterThan(100);
    expect(all.some((c) => c.where.startsWith('src/'))).toBe(true);
    expect(all.some((c) => c.where.startsWith('docs/'))).toBe(true);
  });

  it('every docs/<topic>.md#anchor resolves to a heading of that document', () => {
    const ids = headingIds();
    const broken = FILES.flatMap(citationsIn)
      .filter(({ doc, anchor }) => !ids.get(doc)?.has(anchor))
      .map(({ where, doc, anchor }) => `${where}: docs/${doc}#${anchor}`);
    expect(broken, 'citations whose anchor is no heading (rename the citation or add the heading)').toEqual(
      [],
    );
  });

  it('a broken anchor would be found', () => {
    const ids = headingIds();
    const [bad] = citationsIn({ path: 'src/x.ts', text: '// see docs/api.md#no-such-heading' });
    const [good] = citationsIn({ path: 'docs/x.md', text: 'see [errors](api.md#errors)' });
    expect(bad && ids.get(bad.doc)?.has(bad.anchor)).toBe(false);
    expect(good && ids.get(good.doc)?.has(good.anchor)).toBe(true);
  });

  it('nothing cites DESIGN §n, spec §n or a file outside the repository', () => {
    const offenders = FILES.flatMap((file) =>
      file.text
        .split('\n')
        .flatMap((line, index) => (OUTSIDE.test(line) ? [`${file.path}:${index + 1}: ${line.trim()}`] : [])),
    );
    expect(offenders, 'cite the rule in docs/<topic>.md#anchor instead').toEqual([]);
  });

  it('the outside-citation rule fails on each form it refuses', () => {
    for (const line of [
      '// (DESIGN §13)',
      '/* spec §2.6 */',
      '// Spec §8: at most',
      '// shared/reference/providers.md §C1',
      '// see ../shared/DESIGN.md',
      '-- (DESIGN §9, local development)',
    ]) {
      expect(OUTSIDE.test(line), line).toBe(true);
    }
    expect(OUTSIDE.test('// RFC 6761 §6.3: localhost')).toBe(false);
    expect(OUTSIDE.test('// docs/deposits.md#value')).toBe(false);
  });

  /**
   * Files moved since a migration named them. A migration is never edited (its checksum is
   * checked), so its comments keep the old path; the new one must exist.
   */
  const MOVED_SINCE_MIGRATION: Record<string, string> = {
    'src/markets/list-cache.ts': 'src/markets/read/list-cache.ts',
    'src/markets/ingest-sql.ts': 'src/markets/ingest/ingest-sql.ts',
  };

  it('a cited source file exists', () => {
    const missing = FILES.flatMap((file) =>
      file.text.split('\n').flatMap((line, index) =>
        [...line.matchAll(/(?<![\w/.-])(src\/[\w/.-]+\.ts)\b/g)]
          .map((match) => match[1] as string)
          .map((path) =>
            file.path.startsWith('src/db/migrations/') ? (MOVED_SINCE_MIGRATION[path] ?? path) : path,
          )
          .filter((path) => {
            // The client package's README names its own files.
            const base = file.path.startsWith('client/') ? join(ROOT, 'client') : ROOT;
            try {
              return !statSync(join(base, path)).isFile();
            } catch {
              return true;
            }
          })
          .map((path) => `${file.path}:${index + 1}: ${path}`),
      ),
    );
    expect(missing, 'comments and docs that name a src/ file that does not exist').toEqual([]);
  });
});
