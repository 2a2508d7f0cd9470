// What `serve` warns about at start from its config alone: set-ups that work but leave a
// guard off without the operator having said so. It decides the words; main.ts logs them.

import type { Config } from './types.js';

/**
 * The warnings for this config, each one line naming the settings that silence it. A bind
 * beyond loopback with neither SWITCHBOARD_PUBLIC_URL nor SWITCHBOARD_ALLOWED_HOSTS
 * serves any Host (docs/design/limits.md, "Host and Origin"): no DNS-rebinding guard,
 * and links, OAuth metadata and cookies go by the listen address.
 */
export function startWarnings(config: Config): string[] {
  if (config.allowedHosts !== null) return [];
  const { host, port } = config.listen;
  return [
    `WARNING: listening on ${host}:${port}, beyond loopback, with neither SWITCHBOARD_PUBLIC_URL nor ` +
      'SWITCHBOARD_ALLOWED_HOSTS set: any Host header is served (no DNS-rebinding guard) and links, OAuth ' +
      `metadata and cookies name ${config.publicUrl}; set SWITCHBOARD_PUBLIC_URL to the URL people and agents use`,
  ];
}
