import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../errors.js';
import { sendError } from '../../http/errors.js';

/** Where `npm run build` puts the single-page app (dashboard/ is its Vite workspace). */
export const DASHBOARD_BUILD = fileURLToPath(new URL('../../../dashboard/dist/', import.meta.url));

/**
 * The page's Content-Security-Policy: its own scripts, styles and API only. Wallet extensions
 * inject their providers through their own isolated worlds, which a page's policy does not govern.
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
  "form-action 'self'",
].join('; ');

/** Vite names every built asset by its content's hash: a name never changes what it serves (nor its .br, .gz). */
const HASHED_ASSET = /(^|\/)assets\/[^/]+-[A-Za-z0-9_-]{8,}\.[a-z0-9]+(\.br|\.gz)?$/;

/**
 * Serves the built dashboard at `/dashboard/`: hashed assets cached for a year, the page itself
 * revalidated every time (so a deploy is seen at once), a strict CSP, and the page for every client
 * route (`/dashboard/keys` …) so a reload or a shared link works.
 */
export async function serveDashboard(app: FastifyInstance, root: string = DASHBOARD_BUILD): Promise<void> {
  app.get('/dashboard', { schema: { hide: true } }, (_request, reply) => reply.redirect('/dashboard/', 301));
  if (!existsSync(`${root}/index.html`)) {
    // A checkout whose dashboard was not built still serves the API; the page says how to build it.
    app.get('/dashboard/*', { schema: { hide: true } }, async (request, reply) =>
      sendError(
        reply,
        new AppError('SERVICE_UNAVAILABLE', 'The dashboard is not built: run npm install (or npm run build)'),
        request.id,
      ),
    );
    return;
  }
  // Its own prefix, so that its not-found handler (the page for client routes) is the dashboard's only.
  await app.register(
    async (scope) => {
      await scope.register(fastifyStatic, {
        root,
        prefix: '/',
        preCompressed: true,
        cacheControl: false,
        setHeaders: (reply, path) => {
          reply.headers({
            'cache-control': HASHED_ASSET.test(path) ? 'public, max-age=31536000, immutable' : 'no-cache',
            'content-security-policy': CONTENT_SECURITY_POLICY,
            'x-content-type-options': 'nosniff',
            'referrer-policy': 'no-referrer',
          });
        },
        schemaHide: true,
      });
      scope.setNotFoundHandler((request: FastifyRequest, reply: FastifyReply) => {
        const path = request.url.split('?')[0] ?? '';
        // A client route (no file extension) gets the page; a missing file or API route is a 404.
        if (
          request.method === 'GET' &&
          !path.startsWith('/dashboard/api/') &&
          !/\.[A-Za-z0-9]+$/.test(path)
        ) {
          return reply.sendFile('index.html');
        }
        return sendError(reply, new AppError('NOT_FOUND', 'No such dashboard resource'), request.id);
      });
    },
    { prefix: '/dashboard' },
  );
}
