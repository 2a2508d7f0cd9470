// Loads the server configuration for commands that need it; a bad environment is a
// usage error (exit 2) listing every problem, before anything starts.

import { loadConfig, type Config } from '../config/index.js';
import { EXIT } from './exit.js';

export function configOrExit(): Config {
  const result = loadConfig();
  if (result.ok) return result.config;
  process.stderr.write(`switchboard: the environment has ${result.problems.length} problem(s):\n`);
  for (const problem of result.problems) process.stderr.write(`  - ${problem}\n`);
  process.exit(EXIT.usage);
}
