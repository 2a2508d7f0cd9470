// The tracing variables (docs/design/tracing.md): the standard OpenTelemetry ones
// Switchboard decides with, and the tracing slice of the config. Part of the environment
// schema (src/config/schema.ts); pure.

import { z } from 'zod';

const OTLP_PROTOCOLS = ['http/protobuf', 'http/json'] as const;
const otlpProtocol = z
  .enum(OTLP_PROTOCOLS, { error: `must be http/protobuf or http/json (gRPC is not supported)` })
  .optional();
const otlpUrl = z
  .string()
  .refine((v) => URL.canParse(v) && /^https?:$/.test(new URL(v).protocol), 'must be an http(s) URL')
  .optional();

export const TRACING_VARS = {
  // Traces (docs/design/tracing.md): the standard OpenTelemetry variables. Unset, nothing
  // of OpenTelemetry is loaded; set, spans go over OTLP/HTTP to the collector. The
  // exporters read the other OTEL_EXPORTER_OTLP_* variables (headers, timeout,
  // compression) themselves; these are the ones Switchboard decides with.
  OTEL_EXPORTER_OTLP_ENDPOINT: otlpUrl,
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: otlpUrl,
  // http/protobuf is the SDKs' default and the smaller body; gRPC would need another
  // transport stack for one exporter, so it is refused rather than silently swapped.
  OTEL_EXPORTER_OTLP_PROTOCOL: otlpProtocol,
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: otlpProtocol,
  OTEL_SERVICE_NAME: z.string().min(1).optional(),
};

/** Traces over OTLP (docs/design/tracing.md); `enabled` false: OpenTelemetry is never loaded. */
export interface TracingConfig {
  enabled: boolean;
  protocol: (typeof OTLP_PROTOCOLS)[number];
  /** Where spans are POSTed: the traces endpoint as given, else the endpoint + /v1/traces. */
  tracesUrl: string | null;
  /** service.name of every span: OTEL_SERVICE_NAME, else `switchboard`. */
  serviceName: string;
}

export function tracingConfig(e: z.infer<z.ZodObject<typeof TRACING_VARS>>): TracingConfig {
  const base = e.OTEL_EXPORTER_OTLP_ENDPOINT;
  const tracesUrl = e.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? (base ? `${base.replace(/\/+$/, '')}/v1/traces` : null);
  return {
    enabled: tracesUrl !== null,
    // The signal-specific variable wins over the general one, as the specification says.
    protocol: e.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? e.OTEL_EXPORTER_OTLP_PROTOCOL ?? 'http/protobuf',
    tracesUrl,
    serviceName: e.OTEL_SERVICE_NAME ?? 'switchboard',
  };
}
