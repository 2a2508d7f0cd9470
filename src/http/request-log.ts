// One structured line per request, written when the response is done: request id,
// method, the matched route pattern (never the raw URL: a webhook URL's path is its
// secret), status, duration and, on /mcp, the endpoint's slug. The request id is the
// caller's X-Request-Id when it is a short token, else a fresh one; it is echoed back
// and labels every line logged through request.log. Probes and scrapes (/healthz,
// /readyz, /metrics) are left out: they would drown the rest. Headers, bodies and
// credentials are never logged. Every request, probes included, is timed into
// switchboard_http_request_duration_seconds under the same route pattern.

import { randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { LatencyHistograms } from '../metrics/latency.js';
import { NO_TRACING, type Tracing } from '../tracing/index.js';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;
const QUIET = new Set(['/healthz', '/readyz', '/metrics']);

export function requestId(request: { headers: Record<string, string | string[] | undefined> }): string {
  const offered = request.headers['x-request-id'];
  return typeof offered === 'string' && REQUEST_ID.test(offered) ? offered : randomBytes(8).toString('hex');
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The endpoint an MCP request authenticated as, for the request's log line. */
    endpointSlug: string | null;
  }
}

/** Marks the request as made by this endpoint (its log line carries the slug). */
export function noteEndpoint(request: FastifyRequest, slug: string): void {
  request.endpointSlug = slug;
}

/**
 * `latency`: the process's histograms (absent: requests are logged, not timed). The line
 * is written inside the request's span (if any), so it carries its trace_id and span_id:
 * onResponse runs where the response finished, outside the context the span was active in.
 */
export function requestLog(app: FastifyInstance, latency?: LatencyHistograms, tracing: Tracing = NO_TRACING): void {
  app.decorateRequest('endpointSlug', null);
  app.addHook('onSend', async (request, reply) => {
    void reply.header('X-Request-Id', request.id);
  });
  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url;
    latency?.answered(route, request.method, reply.statusCode, reply.elapsedTime / 1000);
    if (route !== undefined && QUIET.has(route)) return;
    const line = () =>
      request.log.info(
        {
          method: request.method,
          route: route ?? 'unmatched',
          status: reply.statusCode,
          ms: Math.round(reply.elapsedTime * 10) / 10,
          ...(request.endpointSlug ? { endpoint: request.endpointSlug } : {}),
        },
        'request',
      );
    if (request.traceSpan) tracing.activate(request.traceSpan, line);
    else line();
  });
}
