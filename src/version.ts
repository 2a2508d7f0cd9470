// What build this is: the package version, and the commit and build time stamped into
// build-info.json by `npm ci`/`npm install` (scripts/stamp-build.mjs). A checkout that
// was never stamped reports "unknown" rather than guessing. src/version.ts and the
// compiled dist/version.js both sit one folder below the package root, so the same
// relative URLs find both files from either (readFileSync takes the file URL itself, so
// escaped characters such as a space in the install path are decoded correctly).

import { readFileSync } from 'node:fs';

export interface VersionInfo {
  version: string;
  commit: string;
  build_time: string;
}

function readJson(relative: string): Record<string, unknown> {
  try {
    return JSON.parse(readFileSync(new URL(relative, import.meta.url), 'utf8')) as Record<string, unknown>;
  } catch {
    return {};
  }
}

export function versionInfo(): VersionInfo {
  const pkg = readJson('../package.json');
  const build = readJson('../build-info.json');
  return {
    version: typeof pkg.version === 'string' ? pkg.version : '0.0.0',
    commit: typeof build.commit === 'string' ? build.commit : 'unknown',
    build_time: typeof build.build_time === 'string' ? build.build_time : 'unknown',
  };
}
