// `switchboard login --web` (docs/design/cli-login.md): the CLI listens on a loopback port,
// opens the board's /cli/login with its redirect URI, a state and a PKCE S256 challenge;
// the signed-in human approves there, which makes a one-time code bound to that human, the
// redirect URI, the challenge and the token name; the CLI spends the code with its verifier
// at POST /api/v1/auth/cli-token for a login token made exactly as a password sign-in makes
// one. A code lives 60 s and is spent by its first presentation, whatever that one's fate.

import { createHash } from 'node:crypto';
import { z } from 'zod';
import { withTx } from '../db/pool.js';
import { AppError, invalidArgument } from '../domain/errors.js';
import { maxLength } from '../domain/issues.js';
import { parseInput } from '../domain/todo.js';
import { insertCliLoginCode, spendCliLoginCode, type CliLoginCodeRow } from '../store/cli-login.js';
import { getHuman, type Human } from '../store/humans.js';
import { issueLoginToken } from './login.js';
import type { TokenDeps } from './principal.js';
import { hashSecret, newSecret } from './secrets.js';

/** Long enough to switch back from the browser on a slow machine, short enough to be worthless stolen. */
export const CLI_LOGIN_CODE_TTL_SECONDS = 60;
/** The token name when the CLI names none. */
export const DEFAULT_CLI_TOKEN_NAME = 'switchboard CLI';
const LOOPBACK = new Set(['127.0.0.1', '[::1]', 'localhost']);
// RFC 7636 §4.1 and §4.2: a verifier of 43–128 unreserved characters; an S256 challenge is 43 base64url.
const VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;
const CHALLENGE = /^[A-Za-z0-9_-]{43}$/;
const CODE = /^sbl_[A-Za-z0-9_-]{43}$/;

/** What the board page was asked: validated, so the approval can only send a code where the CLI listens. */
export interface CliLoginRequest {
  redirectUri: string;
  /** The loopback port the CLI listens on, shown to the human. */
  port: string;
  state: string;
  codeChallenge: string;
  tokenName: string;
}

function one(params: Record<string, unknown>, name: string): string {
  const value = params[name];
  if (value === undefined || value === null || value === '') return '';
  if (typeof value !== 'string') throw invalidArgument(name, 'must be given once');
  return value;
}

/**
 * Why a redirect URI is not the CLI's loopback listener, or null: http on 127.0.0.1, [::1]
 * or localhost, any port (the CLI takes whatever is free, RFC 8252 §7.3), path /callback,
 * nothing else.
 */
export function loopbackProblem(uri: string): string | null {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return 'must be an absolute URL';
  }
  if (url.protocol !== 'http:' || !LOOPBACK.has(url.hostname))
    return 'must be http on 127.0.0.1, [::1] or localhost (the CLI’s loopback listener)';
  if (url.port === '') return 'must name the port the CLI listens on';
  if (url.pathname !== '/callback' || url.search !== '' || url.hash !== '' || uri.includes('#'))
    return 'must have the path /callback and nothing after it';
  if (url.username !== '' || url.password !== '') return 'must not carry user information';
  return null;
}

/** The board page's query (or its form, echoed): valid, or an error naming the field. */
export function checkCliLoginRequest(params: Record<string, unknown>): CliLoginRequest {
  const redirectUri = one(params, 'redirect_uri');
  if (!redirectUri) throw invalidArgument('redirect_uri', 'required');
  const problem = loopbackProblem(redirectUri);
  if (problem) throw invalidArgument('redirect_uri', problem);
  const state = one(params, 'state');
  if (!state) throw invalidArgument('state', 'required');
  if (state.length > 200) throw invalidArgument('state', 'must be at most 200 characters');
  const method = one(params, 'code_challenge_method');
  if (method !== 'S256') throw invalidArgument('code_challenge_method', 'must be S256');
  const codeChallenge = one(params, 'code_challenge');
  if (!CHALLENGE.test(codeChallenge))
    throw invalidArgument('code_challenge', 'must be the 43-character base64url SHA-256 of the verifier');
  const tokenName = (one(params, 'token_name') || DEFAULT_CLI_TOKEN_NAME).trim();
  if (tokenName === '' || tokenName.length > 100) throw invalidArgument('token_name', 'must be 1–100 characters');
  return { redirectUri, port: new URL(redirectUri).port, state, codeChallenge, tokenName };
}

/** Where the browser goes back to: the CLI's listener with these parameters. */
function back(request: CliLoginRequest, params: Record<string, string>): string {
  const url = new URL(request.redirectUri);
  for (const [k, v] of Object.entries({ ...params, state: request.state })) url.searchParams.set(k, v);
  return url.href;
}

/** The human approved: a one-time code for the CLI, and the redirect that carries it. */
export async function approveCliLogin(deps: TokenDeps, humanId: string, request: CliLoginRequest): Promise<string> {
  const code = newSecret('sbl');
  await insertCliLoginCode(deps.db, {
    hash: code.hash,
    humanId,
    redirectUri: request.redirectUri,
    codeChallenge: request.codeChallenge,
    tokenName: request.tokenName,
    ttlSeconds: CLI_LOGIN_CODE_TTL_SECONDS,
  });
  return back(request, { code: code.secret });
}

/** The human denied: the CLI hears so and stops waiting. */
export function denyCliLogin(request: CliLoginRequest): string {
  return back(request, { error: 'access_denied' });
}

export const exchangeInput = z.strictObject({
  code: z.string().check(maxLength(200)),
  code_verifier: z.string().check(maxLength(200)),
  redirect_uri: z.string().check(maxLength(2000)),
  token_name: z.string().trim().min(1).check(maxLength(100)).optional(),
});

/** Why this spent code buys nothing, or null. Checked in this order, each naming its field. */
function refusal(row: CliLoginCodeRow | null, data: z.infer<typeof exchangeInput>): AppError | null {
  if (!row) return invalidArgument('code', 'unknown');
  if (row.used) return invalidArgument('code', 'already used: a code buys one token; run `switchboard login` again');
  if (row.expired) return invalidArgument('code', 'expired: it lives 60 s; run `switchboard login` again');
  if (row.redirect_uri !== data.redirect_uri)
    return invalidArgument('redirect_uri', 'not the one the code was issued for');
  const challenge = createHash('sha256').update(data.code_verifier).digest('base64url');
  if (!VERIFIER.test(data.code_verifier) || challenge !== row.code_challenge)
    return invalidArgument('code_verifier', 'does not match the code_challenge');
  if (data.token_name !== undefined && data.token_name !== row.token_name)
    return invalidArgument('token_name', 'not the name approved in the browser');
  if (!row.human_active)
    return new AppError('forbidden', 'code: the human who approved it is disabled', { field: 'code' });
  return null;
}

/**
 * Spends a code for a login token. The code is marked used and the token inserted in one
 * transaction; a refused code stays spent (that mark is all the transaction writes), so
 * nothing is issued for it and it cannot be tried again.
 */
export async function exchangeCliLoginCode(
  deps: TokenDeps,
  input: unknown,
): Promise<{ token: string; token_id: string; expires_at: Date | null; human: Human }> {
  const data = parseInput(exchangeInput, input);
  if (!CODE.test(data.code)) throw invalidArgument('code', 'unknown');
  type Issued = { token: string; token_id: string; expires_at: Date | null; human: Human };
  const outcome = await withTx(deps.db, async (tx): Promise<{ refused: AppError } | { issued: Issued }> => {
    const row = await spendCliLoginCode(tx, hashSecret(data.code));
    const refused = refusal(row, data);
    if (refused || !row) return { refused: refused ?? invalidArgument('code', 'unknown') };
    const human = await getHuman(tx, row.human_id);
    if (!human) return { refused: invalidArgument('code', 'unknown') };
    const token = await issueLoginToken(tx, deps.tokenTtlSeconds, human.id, row.token_name);
    return { issued: { ...token, human } };
  });
  // Thrown after the commit: the code stays spent, and nothing else was written.
  if ('refused' in outcome) throw outcome.refused;
  return outcome.issued;
}
