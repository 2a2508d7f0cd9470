// `switchboard human list|add|disable|enable|role|reset|unlink-oidc|delete|audit`: the
// people who sign in, as an admin manages them (docs/design/people.md). A human is named by
// id or email; an email is looked up in the list. Invite and reset links are printed once.

import type { Command } from 'commander';
import type {
  HumanAudit,
  HumanCreated,
  HumanDeleted,
  HumanList,
  HumanUpdated,
  OidcUnlinked,
  ResetIssued,
} from '../client/index.js';
import { signedInClient, type ApiClient } from './client.js';
import { CliError, EXIT } from './exit.js';
import { apiCommand, oneLineErrors, oneOf, run, textFlag, type CommonOptions } from './flags.js';
import { emit, keyValues, plural, table } from './output.js';

interface AddOptions extends CommonOptions {
  name?: string;
  role?: string;
}

interface AuditOptions extends CommonOptions {
  limit: string;
  before?: string;
}

interface DeleteOptions extends CommonOptions {
  transferEndpointsTo?: string;
}

const ROLES = ['admin', 'member'] as const;
const humanPath = (id: string) => `/api/v1/humans/${encodeURIComponent(id)}`;

export function registerHuman(program: Command): void {
  const group = oneLineErrors(program.command('human').description('the people who sign in (admins only)'));
  apiCommand(group, 'list', 'list every human with role and state').action(run(list));
  apiCommand(group, 'add', 'invite a human: prints a one-time link (7 days) where they set a password')
    .argument('<EMAIL>', 'their email')
    .option('--name <NAME>', 'their display name')
    .option('--role <ROLE>', 'admin or member (default member)')
    .action(run(add));
  apiCommand(group, 'disable', 'stop a human at once: tokens, board sessions, their agents’ credentials')
    .argument('<HUMAN>', 'id or email')
    .action(run((ref: string, opts: CommonOptions) => setState(ref, 'disabled', opts)));
  apiCommand(group, 'enable', 'let a disabled human sign in again (revoked tokens stay revoked)')
    .argument('<HUMAN>', 'id or email')
    .action(run((ref: string, opts: CommonOptions) => setState(ref, 'active', opts)));
  apiCommand(group, 'role', 'make a human an admin or a member')
    .argument('<HUMAN>', 'id or email')
    .argument('<ROLE>', 'admin or member')
    .action(run(role));
  apiCommand(group, 'reset', 'issue a one-time password-reset link (1 h); spending it ends their sign-ins')
    .argument('<HUMAN>', 'id or email')
    .option('--revoke-grants', 'also revoke every OAuth grant they gave now (their MCP sessions close)')
    .option('--rotate-credentials', 'also replace every endpoint credential of theirs now, with no grace')
    .action(run(reset));
  apiCommand(group, 'unlink-oidc', 'remove a human’s link to their OIDC provider account (a replaced account)')
    .argument('<HUMAN>', 'id or email')
    .action(run(unlinkOidc));
  apiCommand(group, 'audit', 'what was done to a human, by whom and when (newest first)')
    .argument('<HUMAN>', 'id or email')
    .option('--limit <N>', 'entries to show (1–200)', '50')
    .option('--before <ID>', 'continue below this entry id (printed at the end of a full page)')
    .action(run(audit));
  apiCommand(group, 'delete', 'delete a human; their endpoints are revoked and removed unless transferred')
    .argument('<HUMAN>', 'id or email')
    .option('--transfer-endpoints-to <HUMAN>', 'give their endpoints (id or email) to this human instead')
    .action(run(remove));
}

/** The id of the human `ref` names: an id as is, an email through the list. */
async function resolveHuman(client: ApiClient, ref: string, flag = '<HUMAN>'): Promise<string> {
  textFlag(flag, ref, 254);
  if (!ref.includes('@')) return ref;
  const { humans } = await client.request<HumanList>('GET', '/api/v1/humans');
  const found = humans.find((h) => h.email.toLowerCase() === ref.trim().toLowerCase());
  if (!found) throw new CliError(`${flag}: no human with email ${ref}`, EXIT.failure);
  return found.id;
}

async function list(opts: CommonOptions): Promise<void> {
  const client = await signedInClient(opts.url);
  const answer = await client.request<HumanList>('GET', '/api/v1/humans');
  emit(opts.json, answer, (a) =>
    table(
      a.humans,
      [
        { header: 'ID', value: (h) => h.id },
        { header: 'EMAIL', value: (h) => h.email, max: 40 },
        { header: 'NAME', value: (h) => h.display_name, max: 30 },
        { header: 'ROLE', value: (h) => h.role },
        { header: 'STATE', value: (h) => h.state },
        { header: 'CREATED', value: (h) => h.created_at },
      ],
      'no humans',
    ),
  );
}

async function add(email: string, opts: AddOptions): Promise<void> {
  const body: Record<string, unknown> = { email: textFlag('<EMAIL>', email, 254) };
  if (opts.name !== undefined) body.display_name = textFlag('--name', opts.name, 100);
  if (opts.role !== undefined) body.role = oneOf('--role', opts.role, ROLES);
  const client = await signedInClient(opts.url);
  const answer = await client.request<HumanCreated>('POST', '/api/v1/humans', body);
  emit(
    opts.json,
    answer,
    (a) =>
      `invited ${a.human.email} (${a.human.role}, ${a.human.id})\n` +
      `send them this one-time link to set a password (valid 7 days):\n  ${a.invite_url}`,
  );
}

async function setState(ref: string, state: 'active' | 'disabled', opts: CommonOptions): Promise<void> {
  const client = await signedInClient(opts.url);
  const id = await resolveHuman(client, ref);
  const answer = await client.request<HumanUpdated>('PATCH', humanPath(id), { state });
  emit(opts.json, answer, (a) =>
    a.ended
      ? `disabled ${a.human.email}: ${a.ended.tokens_revoked} token(s) revoked, ${a.ended.board_sessions_ended} board session(s) ended, ${a.ended.sessions_closed} agent session(s) closed; their endpoints' credentials stop working until enabled`
      : `${a.human.email} is ${a.human.state}${state === 'active' ? ': they can sign in again (old tokens stay revoked)' : ''}`,
  );
}

async function role(ref: string, roleText: string, opts: CommonOptions): Promise<void> {
  const value = oneOf('<ROLE>', roleText, ROLES);
  const client = await signedInClient(opts.url);
  const id = await resolveHuman(client, ref);
  const answer = await client.request<HumanUpdated>('PATCH', humanPath(id), { role: value });
  emit(opts.json, answer, (a) => `${a.human.email} is now ${a.human.role}`);
}

interface ResetOptions extends CommonOptions {
  revokeGrants?: boolean;
  rotateCredentials?: boolean;
}

async function reset(ref: string, opts: ResetOptions): Promise<void> {
  const client = await signedInClient(opts.url);
  const id = await resolveHuman(client, ref);
  const body = {
    ...(opts.revokeGrants && { revoke_oauth_grants: true }),
    ...(opts.rotateCredentials && { rotate_endpoint_credentials: true }),
  };
  const answer = await client.request<ResetIssued>('POST', `${humanPath(id)}/reset`, body);
  emit(opts.json, answer, (a) => {
    const pairs: [string, unknown][] = [
      ['human', a.human.email],
      ['reset link', a.reset_url],
      ['expires', a.expires_at],
    ];
    if (a.oauth_grants_revoked !== undefined) {
      pairs.push(['grants revoked', `${a.oauth_grants_revoked} (${plural(a.sessions_closed ?? 0, 'session')} closed)`]);
    }
    if (a.endpoint_credentials_rotated !== undefined) {
      const n = a.endpoint_credentials_rotated;
      pairs.push(['credentials replaced', `${n}; the owner runs 'switchboard endpoint rotate' for usable ones`]);
    }
    pairs.push(['note', 'works once; setting the password ends every sign-in they had; an older link stops working']);
    return keyValues(pairs);
  });
}

async function unlinkOidc(ref: string, opts: CommonOptions): Promise<void> {
  const client = await signedInClient(opts.url);
  const id = await resolveHuman(client, ref);
  const answer = await client.request<OidcUnlinked>('DELETE', `${humanPath(id)}/oidc`);
  emit(
    opts.json,
    answer,
    (a) =>
      `unlinked ${a.human.email} from ${a.unlinked.issuer} (subject ${a.unlinked.subject}); ` +
      'their next sign-in through the provider links the account it comes from, by verified e-mail',
  );
}

async function remove(ref: string, opts: DeleteOptions): Promise<void> {
  const client = await signedInClient(opts.url);
  const id = await resolveHuman(client, ref);
  const body: Record<string, unknown> = {};
  if (opts.transferEndpointsTo !== undefined)
    body.transfer_endpoints_to = await resolveHuman(client, opts.transferEndpointsTo, '--transfer-endpoints-to');
  const answer = await client.request<HumanDeleted>('DELETE', humanPath(id), body);
  emit(opts.json, answer, (a) =>
    'endpoints_transferred' in a
      ? `deleted ${ref}; ${a.endpoints_transferred} endpoint(s) transferred`
      : `deleted ${ref}; ${a.endpoints_revoked} endpoint(s) revoked and removed`,
  );
}

async function audit(ref: string, opts: AuditOptions): Promise<void> {
  if (!/^\d+$/.test(opts.limit) || Number(opts.limit) < 1 || Number(opts.limit) > 200) {
    throw new CliError(`--limit: must be a whole number from 1 to 200, got ${opts.limit}`, EXIT.usage);
  }
  const client = await signedInClient(opts.url);
  const id = await resolveHuman(client, ref);
  const query = new URLSearchParams({ limit: opts.limit });
  if (opts.before !== undefined) query.set('before', opts.before);
  const answer = await client.request<HumanAudit>('GET', `${humanPath(id)}/audit?${query.toString()}`);
  emit(opts.json, answer, (a) => {
    const rows = table(
      a.entries,
      [
        { header: 'ID', value: (e) => e.id },
        { header: 'AT', value: (e) => e.at },
        { header: 'ACTION', value: (e) => e.action },
        { header: 'BY', value: (e) => e.actor_email ?? e.actor_human_id, max: 40 },
        { header: 'DETAIL', value: (e) => JSON.stringify(e.detail), max: 60 },
      ],
      'no audit entries',
    );
    return a.next_before === null
      ? rows
      : `${rows}
more: switchboard human audit ${ref} --before ${a.next_before}`;
  });
}
