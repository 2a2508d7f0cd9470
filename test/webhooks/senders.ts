// The senders of the provider tests: each provider's own published library where there is
// one (GitHub's @octokit/webhooks-methods, Stripe's test header helper, the Standard
// Webhooks reference library), else the algorithm exactly as the provider documents it
// (Gitea/Forgejo, GitLab, Slack). Each answers the headers a real delivery carries.

import { createHmac, randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { sign as githubSign } from '@octokit/webhooks-methods';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import Stripe from 'stripe';

const stripe = new Stripe('sk_test_switchboard_tests_never_call_stripe');

/** A fixture's bytes, exactly as a provider would send them (pretty-printed JSON, like GitHub's). */
export async function fixture(name: string): Promise<string> {
  return readFile(new URL(`./fixtures/${name}`, import.meta.url), 'utf8');
}

export interface Signed {
  raw: string;
  headers: Record<string, string>;
}

export async function github(
  secret: string,
  event: string,
  raw: string,
  delivery: string = randomUUID(),
): Promise<Signed> {
  return {
    raw,
    headers: {
      'content-type': 'application/json',
      'x-github-event': event,
      'x-github-delivery': delivery,
      'x-hub-signature-256': await githubSign(secret, raw),
      'user-agent': 'GitHub-Hookshot/abc123',
    },
  };
}

/** Gitea signs the body with HMAC-SHA256 in bare hex; Forgejo sends the same under its own names too. */
export function gitea(
  secret: string,
  event: string,
  raw: string,
  forgejo = false,
  delivery: string = randomUUID(),
): Signed {
  const signature = createHmac('sha256', secret).update(raw).digest('hex');
  const name = forgejo ? 'forgejo' : 'gitea';
  return {
    raw,
    headers: {
      'content-type': 'application/json',
      [`x-${name}-event`]: event,
      [`x-${name}-delivery`]: delivery,
      [`x-${name}-signature`]: signature,
    },
  };
}

/** GitLab sends the configured secret token as is. */
export function gitlab(secret: string, event: string, raw: string, uuid: string = randomUUID()): Signed {
  return {
    raw,
    headers: {
      'content-type': 'application/json',
      'x-gitlab-event': event,
      'x-gitlab-event-uuid': uuid,
      'x-gitlab-token': secret,
    },
  };
}

export function stripeSigned(secret: string, raw: string, timestamp = Math.floor(Date.now() / 1000)): Signed {
  return {
    raw,
    headers: {
      'content-type': 'application/json; charset=utf-8',
      'stripe-signature': stripe.webhooks.generateTestHeaderString({ payload: raw, secret, timestamp }),
    },
  };
}

/** Slack: v0=hex HMAC-SHA256 of "v0:<timestamp>:<body>". */
export function slack(
  secret: string,
  raw: string,
  contentType = 'application/json',
  timestamp = Math.floor(Date.now() / 1000),
): Signed {
  const signature = `v0=${createHmac('sha256', secret).update(`v0:${timestamp}:${raw}`).digest('hex')}`;
  return {
    raw,
    headers: {
      'content-type': contentType,
      'x-slack-request-timestamp': String(timestamp),
      'x-slack-signature': signature,
    },
  };
}

export function standard(secret: string, raw: string, at = new Date(), id = `msg_${randomUUID()}`): Signed {
  const signature = new StandardWebhook(secret).sign(id, at, raw);
  return {
    raw,
    headers: {
      'content-type': 'application/json',
      'webhook-id': id,
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': signature,
    },
  };
}
