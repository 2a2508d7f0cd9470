// The per-human quotas (docs/design/limits.md, "Quotas"): what each counts and the setting
// that sets it. Pure: the counting is in src/store/quotas.ts, the check in src/quotas/.

/** Each quota's most allowed; live todos are per endpoint, the rest per human. */
export interface Quotas {
  endpoints: number;
  liveTodosPerEndpoint: number;
  apiTokens: number;
  webhooks: number;
  notifyHooks: number;
  schedules: number;
}

export type QuotaKind = keyof Quotas;

/** The defaults of the SWITCHBOARD_QUOTA_* settings (src/config/schema.ts says why each). */
export const DEFAULT_QUOTAS: Quotas = {
  endpoints: 100,
  liveTodosPerEndpoint: 1_000_000,
  apiTokens: 100,
  webhooks: 100,
  notifyHooks: 100,
  schedules: 100,
};

/** How a refusal words each quota, and the setting that raises it. */
export const QUOTA_WORDS: Record<QuotaKind, { what: string; per: string; setting: string }> = {
  endpoints: { what: 'endpoints', per: 'human', setting: 'SWITCHBOARD_QUOTA_ENDPOINTS' },
  liveTodosPerEndpoint: { what: 'live todos', per: 'endpoint', setting: 'SWITCHBOARD_QUOTA_LIVE_TODOS' },
  apiTokens: { what: 'live API tokens', per: 'human', setting: 'SWITCHBOARD_QUOTA_API_TOKENS' },
  webhooks: { what: 'webhooks', per: 'human', setting: 'SWITCHBOARD_QUOTA_WEBHOOKS' },
  notifyHooks: { what: 'notify hooks', per: 'human', setting: 'SWITCHBOARD_QUOTA_NOTIFY_HOOKS' },
  schedules: { what: 'schedules', per: 'human', setting: 'SWITCHBOARD_QUOTA_SCHEDULES' },
};
