// Identifiers: a short type prefix and a ULID, so ids sort by creation time, are safe in
// URLs, and say what they name in a log line (td_ todo, ep_ endpoint, hu_ human,
// tk_ API token, wh_ webhook, ms_ MCP session, rg_ doorbell ring, dt_ doorbell test).

import { monotonicFactory } from 'ulid';

const ulid = monotonicFactory();

export type IdPrefix = 'td' | 'ep' | 'hu' | 'tk' | 'wh' | 'ms' | 'rg' | 'dt';

export function newId(prefix: IdPrefix): string {
  return `${prefix}_${ulid()}`;
}

const ID_PATTERN = /^[a-z]{2}_[0-9A-HJKMNP-TV-Z]{26}$/;

export function isId(prefix: IdPrefix, text: string): boolean {
  return ID_PATTERN.test(text) && text.startsWith(`${prefix}_`);
}
