// The CLI's way to the REST API: which server and token a command uses (--url, then
// SWITCHBOARD_URL, then the saved login; SWITCHBOARD_TOKEN, then the saved token), and a
// small fetch client that sends JSON with a bearer token and turns every failure into
// one CliError line. Never touches the database; knows no route but the ones it is given.

import { loadCliEnv, type CliEnv } from '../config/cli.js';
import { loadCredentials, type Credentials } from './credentials.js';
import { CliError, EXIT } from './exit.js';

/** Where `serve` listens by default, so `switchboard login` works on one box with no flags. */
export const DEFAULT_URL = 'http://127.0.0.1:8080';
/** Every route answers in milliseconds; 30 s means the server or the network is stuck. */
const REQUEST_TIMEOUT_MS = 30_000;

/** An `{"error": {...}}` answer. A rejected field is a usage error (exit 2), the rest exit 1. */
export class ApiError extends CliError {
  constructor(
    message: string,
    code: string,
    readonly status: number,
    readonly details?: Record<string, unknown>,
  ) {
    super(
      message,
      code === 'invalid_argument' ? EXIT.usage : EXIT.failure,
      code,
      typeof details?.field === 'string' ? details.field : undefined,
    );
  }
}

export interface ApiClient {
  readonly url: string;
  request<T>(method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', path: string, body?: unknown): Promise<T>;
}

export interface Target {
  url: string;
  token: string | null;
  env: CliEnv;
}

/** `https://host:port[/prefix]` without a trailing slash; `source` names the flag or variable. */
export function normalizeUrl(text: string, source: string): string {
  let parsed: URL;
  try {
    parsed = new URL(text.trim());
  } catch {
    throw new CliError(`${source}: "${text}" is not a URL such as http://127.0.0.1:8080`, EXIT.usage);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    throw new CliError(`${source}: "${text}" must start with http:// or https://`, EXIT.usage);
  if (parsed.username || parsed.password || parsed.search || parsed.hash)
    throw new CliError(`${source}: "${text}" must be only scheme, host, port and an optional path`, EXIT.usage);
  return `${parsed.origin}${parsed.pathname}`.replace(/\/+$/, '');
}

/**
 * The server and token a command uses. The saved token goes only to the server it was
 * issued by: --url naming another server needs SWITCHBOARD_TOKEN or a new login.
 */
export async function resolveTarget(flagUrl: string | undefined, saved?: Credentials | null): Promise<Target> {
  const env = loadCliEnv();
  const login = saved === undefined ? await loadCredentials(env.configDir) : saved;
  const url =
    flagUrl !== undefined
      ? normalizeUrl(flagUrl, '--url')
      : env.url !== null
        ? normalizeUrl(env.url, 'SWITCHBOARD_URL')
        : login
          ? normalizeUrl(login.url, 'the saved login')
          : DEFAULT_URL;
  const savedToken = login && normalizeUrl(login.url, 'the saved login') === url ? login.token : null;
  return { url, token: env.token ?? savedToken, env };
}

/** A client for a command that needs a signed-in human. */
export async function signedInClient(flagUrl: string | undefined): Promise<ApiClient> {
  const target = await resolveTarget(flagUrl);
  if (target.token === null) throw notSignedIn(target.url);
  return apiClient(target.url, target.token);
}

export function notSignedIn(url: string): CliError {
  return new CliError(`not signed in: run \`switchboard login --url ${url}\``, EXIT.failure);
}

export function apiClient(url: string, token: string | null, fetchImpl: typeof fetch = fetch): ApiClient {
  return {
    url,
    async request<T>(method: string, path: string, body?: unknown): Promise<T> {
      const headers: Record<string, string> = { accept: 'application/json' };
      if (token !== null) headers.authorization = `Bearer ${token}`;
      if (body !== undefined) headers['content-type'] = 'application/json';
      let response: Response;
      try {
        response = await fetchImpl(`${url}${path}`, {
          method,
          headers,
          body: body === undefined ? undefined : JSON.stringify(body),
          signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
        });
      } catch (err) {
        throw unreachable(url, err);
      }
      return readAnswer<T>(response, { url, method, path, signedIn: token !== null });
    },
  };
}

async function readAnswer<T>(
  response: Response,
  request: { url: string; method: string; path: string; signedIn: boolean },
): Promise<T> {
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = text === '' ? null : JSON.parse(text);
  } catch {
    throw new CliError(
      `${request.url} answered ${request.method} ${request.path} with HTTP ${response.status} and no JSON: is it a Switchboard server?`,
    );
  }
  if (response.ok) return parsed as T;
  const error = (parsed as { error?: unknown } | null)?.error;
  if (typeof error !== 'object' || error === null || typeof (error as { code?: unknown }).code !== 'string') {
    throw new CliError(
      `${request.url} answered ${request.method} ${request.path} with HTTP ${response.status}: is the server a Switchboard of this version?`,
    );
  }
  const { code, message, details } = error as { code: string; message?: unknown; details?: Record<string, unknown> };
  throw new ApiError(
    explain(code, typeof message === 'string' ? message : code, response, { ...request, reason: details?.reason }),
    code,
    response.status,
    details,
  );
}

function explain(
  code: string,
  message: string,
  response: Response,
  request: { url: string; signedIn: boolean; reason?: unknown },
) {
  if (code === 'unauthenticated' && request.reason === 'token_expired')
    return `your login expired (unused for longer than the server's SWITCHBOARD_TOKEN_TTL): run \`switchboard login --url ${request.url}\` again`;
  if (code === 'unauthenticated' && request.signedIn)
    return `${message} (unauthenticated): sign in again with \`switchboard login --url ${request.url}\``;
  if (code === 'resource_exhausted') {
    const retryAfter = response.headers.get('retry-after');
    if (retryAfter) return `${message} (resource_exhausted): retry in ${retryAfter} s`;
  }
  return `${message} (${code})`;
}

/** fetch's network failures, as one line naming the URL and what to do about it. */
export function unreachable(url: string, err: unknown): CliError {
  const hint = 'start the server with `switchboard serve` or point at it with --url';
  if (err instanceof Error && err.name === 'TimeoutError')
    return new CliError(
      `no answer from ${url} within ${REQUEST_TIMEOUT_MS / 1000} s: is the server overloaded?`,
      EXIT.failure,
      'unavailable',
    );
  const code = networkCode(err);
  if (code === 'ECONNREFUSED')
    return new CliError(`cannot connect to ${url} (connection refused): ${hint}`, EXIT.failure, 'unavailable');
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN')
    return new CliError(`cannot resolve the host of ${url}: check the URL or pass --url`, EXIT.failure, 'unavailable');
  const cause = (err as { cause?: unknown } | undefined)?.cause;
  const reason = code ?? (cause instanceof Error ? cause.message : err instanceof Error ? err.message : String(err));
  return new CliError(`cannot reach ${url} (${reason}): ${hint}`, EXIT.failure, 'unavailable');
}

function networkCode(err: unknown): string | undefined {
  const cause = (err as { cause?: { code?: unknown; errors?: { code?: unknown }[] } } | undefined)?.cause;
  const code = cause?.code ?? cause?.errors?.[0]?.code;
  return typeof code === 'string' ? code : undefined;
}
