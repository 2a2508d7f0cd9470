// The live part of `switchboard doctor ENDPOINT`: starts a doorbell self-test through the
// operator API (as the signed-in human; never with the endpoint's credential), shows a
// progress indicator on a terminal while the agent has time to claim, and renders the
// verdict. "Delivered" (written to the stream) and "heard" (claimed) are told apart.

import type { DoorbellReport, DoorbellTestStarted } from '../client/index.js';
import type { ApiClient } from './client.js';
import { endpointPath } from './endpoint.js';
import { clean } from './output.js';

// A second between reads: the verdict changes at the claim, so this is the extra latency
// a person sees; the API's rate limits allow far more.
const POLL_MS = 1_000;
// Past report_after the server freezes the verdict on the next read; a few seconds cover
// clock differences between this machine and the server.
const GRACE_MS = 5_000;
const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

function progress(enabled: boolean) {
  let frame = 0;
  return {
    tick(text: string) {
      if (!enabled) return;
      frame = (frame + 1) % FRAMES.length;
      process.stderr.write(`\r${FRAMES[frame]} ${text}\u001b[K`);
    },
    done() {
      if (enabled) process.stderr.write('\r\u001b[K');
    },
  };
}

export async function runSelfTest(client: ApiClient, ref: string, waitSeconds: number): Promise<DoorbellReport> {
  const base = `${endpointPath(ref)}/doorbell-tests`;
  const started = await client.request<DoorbellTestStarted>('POST', base, {
    wait_seconds: waitSeconds,
  });
  const path = `${base}/${encodeURIComponent(started.test_id)}`;
  const deadline = Date.parse(started.report_after) + GRACE_MS;
  const tty = process.stderr.isTTY === true;
  const spinner = progress(tty);
  // Without a terminal (CI, a pipe) one line says what is happening instead of a spinner.
  if (!tty) {
    process.stderr.write(
      `doorbell self-test ${started.test_id} started: the doorbell rings in about 2 s; ` +
        `waiting up to ${waitSeconds} s for the agent to claim it\n`,
    );
  }
  try {
    for (;;) {
      const report = await client.request<DoorbellReport>('GET', path);
      // A pass frozen by a claim that beat the ring's record by an instant gets its timing
      // a moment later (doorbell/self-test-report.ts completePass): read again for it.
      const settling = report.verdict === 'pass' && report.delivered.at === null;
      if ((report.verdict !== 'pending' && !settling) || Date.now() > deadline) return report;
      const left = Math.max(0, Math.round((Date.parse(started.report_after) - Date.now()) / 1000));
      const phase = report.delivered.written ? 'delivered; waiting to be heard (a claim)' : 'ringing';
      spinner.tick(`doorbell self-test ${started.test_id}: ${phase}, ${left}s left`);
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
  } finally {
    spinner.done();
  }
}

const VERDICT_TEXT: Record<string, string> = {
  pass: 'PASS: delivered and heard',
  unheard: 'UNHEARD: delivered to the stream, but nothing claimed it',
  no_session: 'NO SESSION: nothing is connected to this endpoint',
  no_channel: 'NO CHANNEL: the session did not declare claude/channel, so it is never rung (it must long-poll)',
  no_stream: 'NO STREAM: a session is connected but holds no notification stream',
  write_failed: 'WRITE FAILED: the stream closed while the doorbell was written',
  pending: 'PENDING: no verdict yet',
};

export function renderReport(report: DoorbellReport): string {
  const lines = [`doorbell self-test ${report.test_id}: ${VERDICT_TEXT[report.verdict] ?? report.verdict}`];
  const clients = report.channel_capability.clients.map((c) => `${c.name ?? '?'} ${c.version ?? ''}`.trim());
  lines.push(`  clients: ${clients.length > 0 ? clean(clients.join(', ')) : '(none)'}`);
  lines.push(`  stream attached: ${report.stream_attached ? 'yes' : 'no'}`);
  lines.push(
    report.delivered.written
      ? `  delivered: yes${report.delivered.at ? ` at ${report.delivered.at}` : ''}` +
          `${report.delivered.session_id ? ` to ${report.delivered.session_id}` : ''}`
      : '  delivered: no',
  );
  lines.push(
    report.claimed_within_seconds !== null
      ? `  heard: yes, claimed within ${report.claimed_within_seconds} s`
      : `  heard: ${report.verdict === 'pass' ? 'yes' : 'no'}`,
  );
  if (report.hints.length > 0) lines.push('  hints:', ...report.hints.map((h) => `  - ${clean(h)}`));
  return lines.join('\n') + '\n';
}
