// A span per HTTP request (docs/design/tracing.md, "HTTP"): named `METHOD /route/pattern`
// (never the raw URL: a webhook URL's path is its secret), a child of the caller's
// `traceparent` header when it sends one. The span is made the active context for the rest
// of the request's hooks and its handler (the hook hands `done` to the context), so every
// span and statement the request causes hangs under it, and a todo it creates stores it.
// With tracing off no hook is added at all.

import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TraceSpan, Tracing } from '../tracing/index.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The request's span when tracing is on, else null. */
    traceSpan: TraceSpan | null;
  }
}

/** The route pattern of a request, as the span name and the request log say it. */
function routeOf(request: FastifyRequest): string {
  return request.routeOptions.url ?? 'unmatched';
}

export function traceRequests(app: FastifyInstance, tracing: Tracing): void {
  app.decorateRequest('traceSpan', null);
  if (!tracing.enabled) return;
  app.addHook('onRequest', (request, _reply, done) => {
    const header = request.headers.traceparent;
    const route = routeOf(request);
    const span = tracing.start(`${request.method} ${route}`, {
      kind: 'server',
      parent: typeof header === 'string' ? header : null,
      attributes: { 'http.request.method': request.method, 'http.route': route },
    });
    request.traceSpan = span;
    tracing.activate(span, done);
  });
  app.addHook('onResponse', async (request, reply) => {
    const span = request.traceSpan;
    if (!span) return;
    span.setAttribute('http.response.status_code', reply.statusCode);
    if (reply.statusCode >= 500) span.fail(`HTTP ${reply.statusCode}`);
    span.end();
  });
  app.addHook('onRequestAbort', async (request) => {
    request.traceSpan?.fail('the client went away before the answer');
    request.traceSpan?.end();
  });
}
