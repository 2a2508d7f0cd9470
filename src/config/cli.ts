// The CLI's environment: the optional SWITCHBOARD_URL and SWITCHBOARD_TOKEN overrides and
// the user config directory the credentials file lives in. The one place a CLI command
// reads process.env (docs/architecture.md); the server's variables are in schema.ts, not here.

import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';

export interface CliEnv {
  /** SWITCHBOARD_URL: the server to talk to when --url is not given; overrides the saved one. */
  url: string | null;
  /** SWITCHBOARD_TOKEN: an API token to use instead of the saved one (scripts, CI). */
  token: string | null;
  /** $XDG_CONFIG_HOME, else $HOME/.config: where `switchboard/credentials.json` lives. */
  configDir: string;
}

/** Pure: reads the given environment; `home` is the fallback when HOME is unset. */
export function cliEnvFrom(env: Record<string, string | undefined>, home: string): CliEnv {
  const nonEmpty = (value: string | undefined) => (value && value.trim() !== '' ? value.trim() : null);
  // The XDG spec says a relative XDG_CONFIG_HOME is invalid and must be ignored.
  const xdg = nonEmpty(env.XDG_CONFIG_HOME);
  return {
    url: nonEmpty(env.SWITCHBOARD_URL),
    token: nonEmpty(env.SWITCHBOARD_TOKEN),
    configDir: xdg && isAbsolute(xdg) ? xdg : join(nonEmpty(env.HOME) ?? home, '.config'),
  };
}

export function loadCliEnv(): CliEnv {
  return cliEnvFrom(process.env, homedir());
}
