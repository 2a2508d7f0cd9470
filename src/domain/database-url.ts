// Database URLs with several hosts, as libpq writes them:
// `postgres://user:pass@h1:5432,h2:5433/db?target_session_attrs=read-write`. node-postgres
// reads one host only, so this module splits such a URL into one single-host URL per host
// (each one node-postgres parses as it always did: sslmode, options, application_name…
// ride along) plus the session attributes a connection must have. Pure: no sockets; the
// connecting is in db/connect.ts. It deliberately does not resolve names or check that a
// host exists: that is the connection's business.

/** libpq's target_session_attrs values (PostgreSQL 14+). */
export const SESSION_ATTRS = ['any', 'read-write', 'read-only', 'primary', 'standby', 'prefer-standby'] as const;
export type SessionAttrs = (typeof SESSION_ATTRS)[number];

export interface DatabaseHost {
  /** A name, an IPv4/IPv6 address (no brackets), or a unix-socket directory (starts with `/`). */
  host: string;
  port: number;
}

export interface DatabaseTarget {
  hosts: DatabaseHost[];
  /**
   * What a connection must land on. Absent from a URL with several hosts, `read-write`:
   * Switchboard writes on every path, so a standby is never the right answer (libpq's own
   * default, `any`, would take whichever host answers first). With one host and none
   * given, `any`: no check, exactly as node-postgres connects today.
   */
  attrs: SessionAttrs;
  /** One URL per host, in order, for node-postgres; target_session_attrs removed. */
  urls: string[];
  /** `host:port,host:port/db` without credentials, for log lines. */
  where: string;
  /** `host:port,host:port` alone. */
  servers: string;
}

export type ParsedTarget = { ok: true; target: DatabaseTarget } | { ok: false; problem: string };

/** PostgreSQL's default port, used for each host that names none. */
export const DEFAULT_PORT = 5432;

const SHAPE = /^(postgres(?:ql)?):\/\/(?:([^@/?#]*)@)?([^/?#]*)(\/[^?#]*)?(?:\?([^#]*))?(?:#.*)?$/;

function decode(text: string, field: string): string | { problem: string } {
  try {
    return decodeURIComponent(text);
  } catch {
    return { problem: `the ${field} has a broken percent-encoding (write % as %25)` };
  }
}

function port(text: string, where: string): number | { problem: string } {
  const n = Number(text);
  if (!/^\d{1,5}$/.test(text) || n < 1 || n > 65535) return { problem: `${where}: "${text}" is not a port (1–65535)` };
  return n;
}

/** One `host`, `host:port`, `[v6]` or `[v6]:port` of the authority's comma list. */
function hostEntry(entry: string, defaultPort: number): DatabaseHost | { problem: string } {
  const v6 = /^\[([0-9A-Fa-f:.%a-zA-Z0-9]+)\](?::(.*))?$/.exec(entry);
  if (v6) {
    const p = v6[2] === undefined ? defaultPort : port(v6[2], `host [${v6[1]}]`);
    return typeof p === 'number' ? { host: v6[1]!, port: p } : p;
  }
  if (entry.startsWith('[')) return { problem: `host "${entry}": an IPv6 address needs its closing ]` };
  const parts = entry.split(':');
  if (parts.length > 2) return { problem: `host "${entry}": write an IPv6 address in brackets, as [::1]:5432` };
  const name = decode(parts[0]!, 'host');
  if (typeof name !== 'string') return name;
  if (name === '') return { problem: `host list: an entry is empty ("${entry}")` };
  const p = parts[1] === undefined ? defaultPort : port(parts[1], `host ${name}`);
  return typeof p === 'number' ? { host: name, port: p } : p;
}

/** The `host=`/`port=` query parameters (comma lists, as libpq takes them); sockets go here. */
function queryHosts(hostParam: string, portParam: string | undefined): DatabaseHost[] | { problem: string } {
  const names = hostParam.split(',');
  const ports = portParam === undefined ? [] : portParam.split(',');
  if (ports.length > 1 && ports.length !== names.length) {
    return { problem: `port: ${ports.length} ports for ${names.length} hosts (give one, or one per host)` };
  }
  const hosts: DatabaseHost[] = [];
  for (const [i, name] of names.entries()) {
    if (name === '') return { problem: 'host parameter: an entry is empty' };
    const text = ports[ports.length === 1 ? 0 : i];
    const p = text === undefined || text === '' ? DEFAULT_PORT : port(text, `port of ${name}`);
    if (typeof p !== 'number') return p;
    hosts.push({ host: name, port: p });
  }
  return hosts;
}

function display(h: DatabaseHost): string {
  if (h.host.startsWith('/')) return `${h.host}/.s.PGSQL.${h.port}`;
  return `${h.host.includes(':') ? `[${h.host}]` : h.host}:${h.port}`;
}

/** Parses a postgres:// URL with one or several hosts; a problem names the field at fault. */
export function parseDatabaseUrl(text: string): ParsedTarget {
  const m = SHAPE.exec(text.trim());
  if (!m) return { ok: false, problem: 'must be postgres://[user[:password]@]host[:port][,host[:port]…]/database' };
  const [, scheme, userinfo, authority = '', path = '', query = ''] = m;
  if (userinfo !== undefined) {
    const colon = userinfo.indexOf(':');
    const user = decode(colon < 0 ? userinfo : userinfo.slice(0, colon), 'user');
    if (typeof user !== 'string') return { ok: false, problem: user.problem };
    const password = decode(colon < 0 ? '' : userinfo.slice(colon + 1), 'password');
    if (typeof password !== 'string') return { ok: false, problem: password.problem };
  }
  const database = decode(path.slice(1), 'database name');
  if (typeof database !== 'string') return { ok: false, problem: database.problem };
  const params = new URLSearchParams(query);
  const hostParam = params.get('host');
  const portParam = params.get('port') ?? undefined;
  const rawAttrs = params.get('target_session_attrs');
  if (rawAttrs !== null && !(SESSION_ATTRS as readonly string[]).includes(rawAttrs)) {
    return { ok: false, problem: `target_session_attrs: "${rawAttrs}" is not one of ${SESSION_ATTRS.join(', ')}` };
  }
  let hosts: DatabaseHost[];
  if (hostParam !== null && hostParam !== '') {
    if (authority !== '' && !/^:\d*$/.test(authority)) {
      return { ok: false, problem: 'host: given both before the path and as ?host=; give one' };
    }
    const fromQuery = queryHosts(hostParam, portParam ?? (authority.slice(1) || undefined));
    if (!Array.isArray(fromQuery)) return { ok: false, problem: fromQuery.problem };
    hosts = fromQuery;
  } else if (authority === '') {
    // node-postgres's defaults (PGHOST or localhost) decide, as they do today.
    hosts = [];
  } else {
    const single = portParam === undefined ? DEFAULT_PORT : port(portParam, 'port parameter');
    if (typeof single !== 'number') return { ok: false, problem: single.problem };
    hosts = [];
    for (const entry of authority.split(',')) {
      const h = hostEntry(entry, single);
      if ('problem' in h) return { ok: false, problem: h.problem };
      hosts.push(h);
    }
  }
  const attrs: SessionAttrs = (rawAttrs as SessionAttrs | null) ?? (hosts.length > 1 ? 'read-write' : 'any');
  params.delete('target_session_attrs');
  params.delete('host');
  params.delete('port');
  const rest = params.toString();
  const prefix = `${scheme}://${userinfo === undefined ? '' : `${userinfo}@`}`;
  const urls =
    hosts.length === 0
      ? [`${prefix}${authority}${path}${rest ? `?${rest}` : ''}`]
      : hosts.map((h) => {
          // The host goes in ?host= (node-postgres reads it there for every kind of host),
          // so an IPv6 address or a socket directory needs no bracket or encoding rules.
          const hp = new URLSearchParams({ host: h.host, port: String(h.port) }).toString();
          return `${prefix}${path || '/'}?${hp}${rest ? `&${rest}` : ''}`;
        });
  const servers = hosts.length === 0 ? '(default host)' : hosts.map(display).join(',');
  return { ok: true, target: { hosts, attrs, urls, where: `${servers}${path}`, servers } };
}

/** What a server said it is, from one query on the new connection. */
export interface ServerRole {
  /** SHOW transaction_read_only: a standby, or a primary with default_transaction_read_only. */
  readOnly: boolean;
  /** pg_is_in_recovery(): a standby. */
  inRecovery: boolean;
}

/**
 * Whether a server in `role` satisfies `attrs`. `prefer-standby` takes a standby on the
 * first pass over the hosts and anything on the second (`pass` 2), as libpq does.
 */
export function roleFits(attrs: SessionAttrs, role: ServerRole, pass: 1 | 2 = 1): boolean {
  switch (attrs) {
    case 'any':
      return true;
    case 'read-write':
      return !role.readOnly;
    case 'read-only':
      return role.readOnly;
    case 'primary':
      return !role.inRecovery;
    case 'standby':
      return role.inRecovery;
    case 'prefer-standby':
      return pass === 2 || role.inRecovery;
  }
}

/** Whether a connection must be checked after it opens (`any` needs no round trip). */
export function needsRoleCheck(attrs: SessionAttrs): boolean {
  return attrs !== 'any';
}
