import { readdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import type { FastifyInstance } from 'fastify';
import { Marked, type Tokens } from 'marked';
import { gfmHeadingId } from 'marked-gfm-heading-id';
import { AppError } from '../errors.js';

/**
 * The guides in docs/, served beside the reference page as HTML pages (rendered by `marked`, with
 * GitHub's heading ids so that `api.md#errors` lands on its section), so that the links of /docs
 * and the links between guides work offline. Each page stays at `/docs/guides/<name>.md`: the
 * guides' own relative links (`markets.md#market-list`) resolve to the page they mean. Links out of
 * docs/ (`../client/README.md`) name a file of the repository, not a page: they are shown as text.
 */

const GUIDES_DIR = new URL('../../docs/', import.meta.url);

/** Every guide: each Markdown file of docs/, by name. */
export const GUIDE_NAMES: readonly string[] = readdirSync(GUIDES_DIR)
  .filter((file) => file.endsWith('.md'))
  .map((file) => file.slice(0, -3))
  .sort();

/** The screenshots the dashboard guide shows (docs/dashboard/*.png). */
const IMAGES_DIR = new URL('dashboard/', GUIDES_DIR);
const IMAGE_NAMES: readonly string[] = readdirSync(IMAGES_DIR).filter((file) => /^[\w-]+\.png$/.test(file));

const escapeHtml = (text: string) =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

function renderer(): Marked {
  const marked = new Marked({ gfm: true });
  marked.use(gfmHeadingId());
  marked.use({
    renderer: {
      link(this: { parser: { parseInline(tokens: Tokens.Generic[]): string } }, token: Tokens.Link) {
        const text = this.parser.parseInline(token.tokens);
        if (token.href.startsWith('../')) return `${text} (<code>${escapeHtml(token.href.slice(3))}</code>)`;
        return false;
      },
    },
  });
  return marked;
}

const STYLE = `body{font:16px/1.55 system-ui,sans-serif;max-width:52rem;margin:2rem auto;padding:0 1rem;color:#1b1f24}
nav{font-size:.9rem;border-bottom:1px solid #d0d7de;padding-bottom:.6rem;margin-bottom:1rem}
nav a{margin-right:.7rem}code,pre{font:.88em ui-monospace,monospace;background:#f3f4f6;border-radius:4px}
code{padding:.1em .3em}pre{padding:.8rem;overflow:auto}pre code{padding:0;background:none}
table{border-collapse:collapse;margin:1rem 0}td,th{border:1px solid #d0d7de;padding:.3rem .6rem;vertical-align:top}
img{max-width:100%}`;

function page(name: string, html: string): string {
  const title = /<h1[^>]*>(.*?)<\/h1>/s.exec(html)?.[1]?.replace(/<[^>]+>/g, '') ?? name;
  const nav = [
    '<a href="/docs">API reference</a>',
    ...GUIDE_NAMES.map((guide) => `<a href="${guide}.md">${guide}</a>`),
  ].join(' ');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${escapeHtml(title)} — Sibyl</title><style>${STYLE}</style></head>
<body><nav>${nav}</nav><main>
${html}</main></body></html>
`;
}

export function registerGuides(app: FastifyInstance): void {
  const marked = renderer();
  const rendered = new Map<string, string>();

  app.get<{ Params: { name: string } }>(
    '/docs/guides/:name',
    { schema: { hide: true } },
    async (request, reply) => {
      const name = request.params.name.replace(/\.md$/, '');
      if (!GUIDE_NAMES.includes(name)) throw new AppError('NOT_FOUND', 'No such guide');
      let html = rendered.get(name);
      if (html === undefined) {
        const text = await readFile(new URL(`${name}.md`, GUIDES_DIR), 'utf8');
        html = page(name, await marked.parse(text));
        rendered.set(name, html);
      }
      return reply.type('text/html; charset=utf-8').send(html);
    },
  );

  app.get<{ Params: { file: string } }>(
    '/docs/guides/dashboard/:file',
    { schema: { hide: true } },
    async (request, reply) => {
      const { file } = request.params;
      if (!IMAGE_NAMES.includes(file)) throw new AppError('NOT_FOUND', 'No such image');
      const bytes = await readFile(new URL(file, IMAGES_DIR));
      return reply.type('image/png').header('cache-control', 'public, max-age=3600').send(bytes);
    },
  );
}
