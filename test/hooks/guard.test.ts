// Pins the notify hook SSRF guard: URL shape, refused address ranges, the operator
// allow-list, and that every resolved address is checked (a rebinding name is refused).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isAppError } from '../../src/domain/errors.js';
import { parseConfig } from '../../src/config/index.js';
import { HookGuard, type Resolver } from '../../src/hooks/guard.js';

const refusedUrl = (err: unknown) => isAppError(err, 'invalid_argument') && err.details?.field === 'url';
const fixed =
  (table: Record<string, string[]>): Resolver =>
  async (host) => {
    const found = table[host];
    if (!found) throw new Error(`ENOTFOUND ${host}`);
    return found.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };

test('only https URLs without credentials are accepted, http only when the operator allows it', () => {
  const strict = new HookGuard({ allowHttp: false, allowCidrs: [] });
  assert.equal(strict.checkUrl('https://hooks.example.com/x?y=1').hostname, 'hooks.example.com');
  for (const bad of [
    'http://hooks.example.com/',
    'ftp://hooks.example.com/',
    'https://user:pw@hooks.example.com/',
    'not a url',
    '',
    `https://a.example/${'x'.repeat(2100)}`,
  ]) {
    assert.throws(() => strict.checkUrl(bad), refusedUrl, bad);
  }
  const relaxed = new HookGuard({ allowHttp: true, allowCidrs: [] });
  assert.equal(relaxed.checkUrl('http://hooks.example.com/').protocol, 'http:');
});

test('loopback, private, link-local, CGNAT, ULA and multicast addresses are refused without the allow-list', () => {
  const guard = new HookGuard({ allowHttp: false, allowCidrs: [] });
  const refused = [
    '127.0.0.1',
    '10.1.2.3',
    '172.16.0.1',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '224.0.0.1',
    '::1',
    'fe80::1',
    'fd00::1',
    'ff02::1',
    '::ffff:127.0.0.1',
    '::',
  ];
  for (const address of refused) assert.equal(guard.addressAllowed(address), false, address);
  for (const address of ['93.184.216.34', '1.1.1.1', '2606:4700::1111'])
    assert.equal(guard.addressAllowed(address), true, address);
});

test('the IPv6 ranges that embed or translate to IPv4 are refused, and the public address beside each is allowed', () => {
  const guard = new HookGuard({ allowHttp: false, allowCidrs: [] });
  const table: Array<{ range: string; inside: string[]; beside: string }> = [
    { range: '::/96 (IPv4-compatible)', inside: ['::10.0.0.1', '::8.8.8.8', '::ffff:ffff'], beside: '2001:4860::1' },
    { range: '2002::/16 (6to4)', inside: ['2002:a00:1::1', '2002:808:808::1', '2002:ffff::1'], beside: '2003::1' },
    {
      range: '64:ff9b:1::/48 (local NAT64)',
      inside: ['64:ff9b:1::a00:1', '64:ff9b:1:ffff::1'],
      beside: '2a00:1450::1',
    },
  ];
  for (const { range, inside, beside } of table) {
    for (const address of inside) assert.equal(guard.addressAllowed(address), false, `${address} in ${range}`);
    assert.equal(guard.addressAllowed(beside), true, `${beside} beside ${range}`);
  }
});

test('IPv6 outside 2000::/3, and the special-purpose ranges inside it, are refused (IANA registry)', () => {
  const guard = new HookGuard({ allowHttp: false, allowCidrs: [] });
  const refused: Array<[string, string]> = [
    ['::ffff:0:10.0.0.1', '::ffff:0:0:0/96 (IPv4-translated, SIIT)'],
    ['::ffff:0:7f00:1', '::ffff:0:0:0/96 (IPv4-translated, SIIT)'],
    ['::ffff:7f00:1', '::ffff:0:0/96 (IPv4-mapped, hex form)'],
    ['fec0::1', 'fec0::/10 (site-local)'],
    ['2001::1', '2001::/32 (Teredo)'],
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', '2001::/32 (Teredo)'],
    ['2001:10::1', '2001:10::/28 (ORCHID)'],
    ['2001:20::1', '2001:20::/28 (ORCHIDv2)'],
    ['2001:2::1', '2001:2::/48 (benchmarking)'],
    ['3fff::1', '3fff::/20 (documentation)'],
    ['5f00::1', '5f00::/16 (SRv6 SIDs)'],
    ['4000::1', 'outside 2000::/3'],
    ['::1:0:0:1', 'outside 2000::/3'],
    ['64:ff9b:2::1', 'outside 2000::/3'],
  ];
  for (const [address, range] of refused) assert.equal(guard.addressAllowed(address), false, `${address} in ${range}`);
  for (const address of ['2001:4860:4860::8888', '2a00:1450:4001::1', '2001:200::1', '2003::1', '3ffe::1']) {
    assert.equal(guard.addressAllowed(address), true, address);
  }
  // An operator may still allow one of them by name.
  assert.equal(new HookGuard({ allowHttp: false, allowCidrs: ['fec0::/10'] }).addressAllowed('fec0::1'), true);
});

test('an operator CIDR allow-list admits exactly the listed private ranges', () => {
  const guard = new HookGuard({ allowHttp: false, allowCidrs: ['10.20.0.0/16', '127.0.0.1'] });
  assert.equal(guard.addressAllowed('10.20.3.4'), true);
  assert.equal(guard.addressAllowed('127.0.0.1'), true);
  assert.equal(guard.addressAllowed('10.21.0.1'), false);
  assert.equal(guard.addressAllowed('127.0.0.2'), false);
});

test('private and loopback targets are refused at resolution, by literal or by name', async () => {
  const guard = new HookGuard({ allowHttp: false, allowCidrs: [] }, fixed({ 'intranet.example': ['10.0.0.5'] }));
  await assert.rejects(guard.resolve('https://127.0.0.1:8443/hook'), refusedUrl);
  await assert.rejects(guard.resolve('https://[::1]/hook'), refusedUrl);
  await assert.rejects(guard.resolve('https://intranet.example/hook'), refusedUrl);
  await assert.rejects(guard.resolve('https://unknown.example/hook'), refusedUrl);
});

test('a DNS-rebinding style hostname that resolves to loopback is refused, even beside a public address', async () => {
  const guard = new HookGuard(
    { allowHttp: false, allowCidrs: [] },
    fixed({
      'rebind.example': ['127.0.0.1'],
      'mixed.example': ['93.184.216.34', '127.0.0.1'],
      'ok.example': ['93.184.216.34'],
    }),
  );
  await assert.rejects(
    guard.resolve('https://rebind.example/hook'),
    (err: unknown) => refusedUrl(err) && /127\.0\.0\.1/.test((err as Error).message),
  );
  await assert.rejects(guard.resolve('https://mixed.example/hook'), refusedUrl);
  const target = await guard.resolve('https://ok.example/hook');
  assert.equal(target.address, '93.184.216.34', 'the delivery connects to the checked address');
});

test('the hook config reads the http flag and the CIDR allow-list, naming a bad variable', () => {
  const good = parseConfig({
    SWITCHBOARD_PUSH_ALLOW_HTTP: 'on',
    SWITCHBOARD_NOTIFY_HOOK_ALLOW_CIDRS: '10.0.0.0/8, 127.0.0.1',
  });
  assert.ok(good.ok);
  assert.deepEqual(good.config.hooks, { allowHttp: true, allowCidrs: ['10.0.0.0/8', '127.0.0.1'] });
  const defaults = parseConfig({});
  assert.ok(defaults.ok);
  assert.deepEqual(defaults.config.hooks, { allowHttp: false, allowCidrs: [] });
  const bad = parseConfig({ SWITCHBOARD_NOTIFY_HOOK_ALLOW_CIDRS: 'intranet', SWITCHBOARD_PUSH_ALLOW_HTTP: 'yes' });
  assert.ok(!bad.ok);
  assert.ok(
    bad.problems.some((p) => p.startsWith('SWITCHBOARD_NOTIFY_HOOK_ALLOW_CIDRS:')),
    bad.problems.join('; '),
  );
  assert.ok(
    bad.problems.some((p) => p.startsWith('SWITCHBOARD_PUSH_ALLOW_HTTP:')),
    bad.problems.join('; '),
  );
});
