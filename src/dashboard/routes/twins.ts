import type { TObject, TSchema } from 'typebox';
import { type DashboardEdge, defineDashboardRoute } from './define.js';

/**
 * The API's account routes, served to the signed-in wallet (docs/dashboard.md#the-endpoints): each
 * was declared once, with its verb, schemas and errors, by its own feature (`defineAccountRoute`,
 * src/http/account-route.ts); here it gets the dashboard's door — the session cookie, the Origin
 * check, the session wallet's account of the mode in the path — at `/dashboard/api/{mode}` followed
 * by the API's own path. No API key is read here, and the session never reaches `/api/v1`. The
 * public market data the dashboard shows (`dashboardTwin` routes: the market list, a market's history
 * and trades, the market stream) are twinned the same way, and billed to that account as the API
 * bills them (docs/dashboard.md#market-data).
 */
export function twinRoutes(edge: DashboardEdge): void {
  for (const twin of edge.app.dashboardTwins.take()) {
    defineDashboardRoute<'account', TSchema, TSchema, TSchema, TObject>(edge, {
      scope: 'account',
      method: twin.method,
      url: twin.url,
      operationId: twin.operationId,
      summary: twin.summary,
      ...(twin.description ? { description: twin.description } : {}),
      ...(twin.params ? { params: twin.params } : {}),
      ...(twin.querystring ? { querystring: twin.querystring } : {}),
      ...(twin.body ? { body: twin.body } : {}),
      ...(twin.bodyRules ? { bodyRules: twin.bodyRules } : {}),
      ...(twin.stream ? { stream: true } : {}),
      response: twin.response,
      errors: twin.errors,
      handler: ({ params, query, body, requestId, ctx, account, mode, session }, request, reply) =>
        twin.run({
          params,
          query,
          body,
          requestId,
          ctx,
          accountId: account.id,
          mode,
          sessionId: session.id,
          request,
          reply,
        }),
    });
  }
}
