// The oldest PostgreSQL Switchboard runs on: 15, the oldest it is tested on (the machine's
// PostgreSQL in CI; the embedded one is 18). An older server is refused at the start, with
// a message saying so, before a migration could fail halfway on it with an error that
// does not (docs/deploy.md).

import type { Queryable } from './pool.js';

export const MIN_SERVER_VERSION_NUM = 150000;

export class ServerVersionError extends Error {
  override name = 'ServerVersionError';
}

/** "PostgreSQL 14.11" from 140011, "PostgreSQL 9.6.24" from 90624 (the pre-10 scheme). */
export function describeVersionNum(num: number): string {
  if (num >= 100000) return `PostgreSQL ${Math.floor(num / 10000)}.${num % 10000}`;
  return `PostgreSQL ${Math.floor(num / 10000)}.${Math.floor(num / 100) % 100}.${num % 100}`;
}

/** Throws ServerVersionError unless `server_version_num` is at least 15. */
export function checkServerVersionNum(num: number, where = 'the database'): void {
  if (!Number.isInteger(num) || num <= 0) {
    throw new ServerVersionError(`${where}: could not read server_version_num (got ${String(num)})`);
  }
  if (num < MIN_SERVER_VERSION_NUM) {
    throw new ServerVersionError(
      `${where} runs ${describeVersionNum(num)} (server_version_num ${num}); Switchboard needs PostgreSQL 15 or ` +
        'later. Upgrade the server, point SWITCHBOARD_DATABASE_URL at a newer one, or leave it unset to use the ' +
        'embedded PostgreSQL',
    );
  }
}

/** Reads the connected server's version and refuses one older than 15. */
export async function checkServerVersion(db: Queryable, where?: string): Promise<number> {
  const res = await db.query<{ v: string }>(`SELECT current_setting('server_version_num') AS v`);
  const num = Number(res.rows[0]?.v);
  checkServerVersionNum(num, where);
  return num;
}
