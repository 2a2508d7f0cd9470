// The security headers of every board response: the Content-Security-Policy (which the
// pages that hand a browser on to another origin widen for their form, board/oauth.ts and
// board/cli-login.ts), no framing, and a same-origin referrer.

import type { FastifyInstance } from 'fastify';

/**
 * Only the board's own files run or style a page, nothing may frame it (its buttons
 * revoke credentials), and forms post only back here: a title an agent wrote that slipped
 * past escaping still could not run.
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  // htmx writes style attributes while it swaps; style elements still come only from here.
  "style-src-attr 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "object-src 'none'",
].join('; ');

/** The security headers of every board response in this context (pages, forms, files). */
export function boardHeaders(app: FastifyInstance): void {
  app.addHook('onSend', async (_request, reply) => {
    // The OAuth consent page sets its own, which lets its form go on to the client (board/oauth.ts).
    if (!reply.hasHeader('Content-Security-Policy'))
      void reply.header('Content-Security-Policy', CONTENT_SECURITY_POLICY);
    void reply.header('X-Frame-Options', 'DENY');
    void reply.header('Referrer-Policy', 'same-origin');
  });
}
