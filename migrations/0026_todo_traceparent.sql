-- 0026: the W3C trace context of the request that created a todo (docs/design/tracing.md,
-- "A todo's trace"): the `traceparent` header of the API or webhook request, an MCP call's
-- `_meta.traceparent`, or a schedule occurrence's own root span. The doorbell ring and the
-- verbs that act on the todo link their spans to it. Nullable and never searched: an
-- untraced install stores nothing, and nothing looks a todo up by its trace (a trace search
-- happens in the tracing backend), so no index (docs/design/scale.md). Adding a nullable
-- column with no default rewrites nothing.
ALTER TABLE todos ADD COLUMN traceparent text;
