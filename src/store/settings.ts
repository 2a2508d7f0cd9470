// Install-wide settings: one JSON value per key, with a version that increases on every
// write. A write tells every instance (`settings_changed`, on commit); an instance
// applies a value only when its version is newer than the one it holds, so overlapping
// saves end with every instance on the last one written.

import { notifySql } from '../db/bus.js';
import type { Queryable } from '../db/pool.js';

export interface StoredSetting {
  value: unknown;
  version: number;
}

export async function readSetting(db: Queryable, key: string): Promise<StoredSetting | null> {
  const res = await db.query<StoredSetting>('SELECT value, version FROM settings WHERE key = $1', [key]);
  return res.rows[0] ?? null;
}

/** Saves the value and announces it; the version this write got. */
export async function writeSetting(db: Queryable, key: string, value: unknown): Promise<StoredSetting> {
  const res = await db.query<StoredSetting & { notified?: unknown }>(
    `WITH w AS (
       INSERT INTO settings AS s (key, value) VALUES ($1, $2::jsonb)
       ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, version = s.version + 1, updated_at = now()
       RETURNING value, version)
     SELECT w.value, w.version,
            ${notifySql('settings_changed', { key: '$1::text', version: 'w.version' })} AS notified
       FROM w`,
    [key, JSON.stringify(value)],
  );
  const row = res.rows[0];
  if (!row) throw new Error(`writing setting ${key} returned no row`);
  return { value: row.value, version: row.version };
}
