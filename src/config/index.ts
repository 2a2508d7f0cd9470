// The one place that reads process.env. Everything else receives a Config slice.

import { parseConfig } from './schema.js';

export type { Config, OidcConfig, TracingConfig } from './types.js';
export { parseConfig, ENV_VARS, isLoopbackHost } from './schema.js';
export { parseDuration, formatDuration } from './duration.js';
export { startWarnings } from './warnings.js';

/** Reads the process environment once; the caller decides how to report problems. */
export function loadConfig(): ReturnType<typeof parseConfig> {
  return parseConfig(process.env);
}

export type { ConfigResult } from './schema.js';
