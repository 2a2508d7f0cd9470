// MCP verbs and the families a human grants them by (docs/design/mcp-surface.md, "Verbs
// and grants"). Self verbs need no grant. The admission family is in AllVerbs but not
// BasicVerbs: it lets an agent change its own budget. The hooks, webhooks, events and
// quarantine families are never granted by default (docs/design/intake.md, "MCP verbs";
// docs/design/routing.md: releasing a stranger's event is exactly what the gate guards).

export const VERB_FAMILIES = {
  drain: [
    'list_todos',
    'get_todo',
    'claim',
    'claim_next',
    'heartbeat',
    'complete',
    'fail',
    'release',
    'ask_human',
    'admission_status',
  ],
  create: ['create_todo'],
  messages: ['send_message', 'list_sessions'],
  admission: ['set_admission_policy', 'clear_admission_policy'],
  hooks: ['create_notify_hook', 'list_notify_hooks', 'rotate_notify_hook', 'delete_notify_hook'],
  webhooks: [
    'create_webhook',
    'list_webhooks',
    'rotate_webhook',
    'set_webhook_secret',
    'delete_webhook',
    'get_webhook_rules',
    'set_webhook_rules',
    'test_webhook_rules',
    'set_trusted_actors',
  ],
  events: ['list_webhook_events', 'get_webhook_event', 'replay_webhook_event'],
  quarantine: ['list_quarantine', 'get_quarantined', 'release_quarantined', 'discard_quarantined'],
} as const;

export type VerbFamily = keyof typeof VERB_FAMILIES;

export const SELF_VERBS = [
  'whoami',
  'ack_doorbell',
  'test_doorbell',
  'get_doorbell_test',
  'next_message',
  'ack_message',
  'clock_in',
  'clock_out',
  'presence',
] as const;

export const FAMILY_NOTES: Partial<Record<VerbFamily, string>> = {
  admission: 'lets the agent change its own budget',
  hooks: 'lets the agent send outbound webhooks',
  webhooks: 'lets the agent open intake URLs that put work on its own queues',
  events: 'lets the agent read what its webhooks received, and replay it',
  quarantine: "lets the agent release strangers' held events to agents (a classifier's verbs)",
};

const ALL_GRANTABLE: readonly string[] = Object.values(VERB_FAMILIES).flat();

export function basicVerbs(): string[] {
  return [...VERB_FAMILIES.drain, ...VERB_FAMILIES.create, ...VERB_FAMILIES.messages];
}

export function allVerbs(): string[] {
  return [...ALL_GRANTABLE];
}

export type ExpandResult = { ok: true; verbs: string[] } | { ok: false; unknown: string };

/** Verb names and family names → the sorted, de-duplicated verb names they grant. */
export function expandVerbs(entries: readonly string[]): ExpandResult {
  const verbs = new Set<string>();
  for (const entry of entries) {
    if (Object.hasOwn(VERB_FAMILIES, entry)) {
      for (const verb of VERB_FAMILIES[entry as VerbFamily]) verbs.add(verb);
    } else if (ALL_GRANTABLE.includes(entry)) {
      verbs.add(entry);
    } else {
      return { ok: false, unknown: entry };
    }
  }
  return { ok: true, verbs: [...verbs].sort() };
}
