#!/usr/bin/env node
// Runs the TypeScript sources through tsx, so a fresh clone needs no build step.
import { register } from 'tsx/esm/api';

register();
const { runCli } = await import('../src/cli/main.ts');
await runCli(process.argv);
