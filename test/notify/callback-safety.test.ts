// The callback safety rules as pure functions, plus the connect-time lookup with a fake resolver.
// Nothing here opens a connection.
import { callbackHostOf } from '../../src/domain/callback-url.js';
import { describe, expect, it } from 'vitest';
import { safeLookup, type Resolver } from '../../src/notify/callback-agent.js';
import {
  checkAddress,
  checkResolved,
  classifyAddress,
  parseCidr,
  parseCidrList,
  parseIp,
  type CallbackPolicy,
} from '../../src/notify/callback-safety.js';

const live: CallbackPolicy = { mode: 'live', allow: [] };
const sandbox: CallbackPolicy = { mode: 'sandbox', allow: [] };
const kind = (a: string) => classifyAddress(parseIp(a)!);

describe('classifyAddress', () => {
  it.each([
    ['8.8.8.8', 'public'],
    ['1.1.1.1', 'public'],
    ['93.184.216.34', 'public'],
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['10.0.0.1', 'private'],
    ['10.255.255.255', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['172.15.255.255', 'public'],
    ['172.32.0.0', 'public'],
    ['192.168.1.1', 'private'],
    ['169.254.169.254', 'link-local'],
    ['100.64.0.1', 'cgnat'],
    ['100.127.255.255', 'cgnat'],
    ['100.128.0.0', 'public'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['240.0.0.1', 'reserved'],
    ['255.255.255.255', 'broadcast'],
    ['192.0.0.8', 'reserved'],
    ['192.0.2.10', 'documentation'],
    ['198.18.0.1', 'reserved'],
    ['198.51.100.1', 'documentation'],
    ['203.0.113.5', 'documentation'],
  ])('IPv4 %s is %s', (a, k) => expect(kind(a)).toBe(k));

  it.each([
    ['2606:4700:4700::1111', 'public'],
    ['2001:4860:4860::8888', 'public'],
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['fc00::1', 'private'],
    ['fd12:3456:789a::1', 'private'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['febf::1', 'link-local'],
    ['fec0::1', 'private'],
    ['ff02::1', 'multicast'],
    ['2001:db8::1', 'documentation'],
    ['2001::1', 'reserved'],
    ['100::1', 'reserved'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:169.254.169.254', 'link-local'],
    ['::ffff:10.1.2.3', 'private'],
    ['::ffff:8.8.8.8', 'public'],
    ['64:ff9b::a9fe:a9fe', 'link-local'],
    ['64:ff9b::808:808', 'public'],
    ['2002:7f00:1::1', 'loopback'],
    ['2002:0808:0808::1', 'public'],
    ['::127.0.0.1', 'reserved'],
    ['::2', 'reserved'],
    ['4000::1', 'reserved'],
    ['[::1]', 'loopback'],
  ])('IPv6 %s is %s', (a, k) => expect(kind(a)).toBe(k));

  it('parses IPv6 layouts exactly', () => {
    expect(Array.from(parseIp('1:2:3:4:5:6:7:8')!.bytes)).toEqual([0, 1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 0, 7, 0, 8]);
    expect(Array.from(parseIp('1::8')!.bytes)).toEqual([0, 1, ...Array(12).fill(0), 0, 8]);
    expect(Array.from(parseIp('::ffff:1.2.3.4')!.bytes.slice(10))).toEqual([0xff, 0xff, 1, 2, 3, 4]);
    expect(parseIp('localhost')).toBeUndefined();
    expect(parseIp('1.2.3')).toBeUndefined();
    expect(parseIp('01.2.3.4')).toBeUndefined();
  });
});

describe('checkAddress', () => {
  it('live mode allows only public addresses', () => {
    for (const a of ['8.8.8.8', '2606:4700:4700::1111', '::ffff:8.8.8.8'])
      expect(checkAddress(a, live).allowed).toBe(true);
    for (const a of [
      '127.0.0.1',
      '::1',
      '10.0.0.1',
      '172.16.5.5',
      '192.168.0.1',
      '169.254.169.254',
      '100.64.1.1',
      '0.0.0.0',
      '224.0.0.1',
      '255.255.255.255',
      '240.1.1.1',
      'fd00::1',
      'fe80::1',
      '::ffff:127.0.0.1',
      '::ffff:192.168.0.1',
      '::',
    ]) {
      expect(checkAddress(a, live), a).toMatchObject({ allowed: false });
    }
  });

  it('says what was refused and how to allow it', () => {
    const v = checkAddress('169.254.169.254', live);
    expect(v).toMatchObject({ allowed: false, kind: 'link-local' });
    expect(!v.allowed && v.reason).toBe(
      'callback address 169.254.169.254 is a link-local address (live mode delivers only to public addresses; an operator can allow it with NOTIFY_ALLOW_CIDRS)',
    );
  });

  it('sandbox mode also allows loopback and private addresses, but not link-local, CGNAT or the rest', () => {
    for (const a of [
      '127.0.0.1',
      '::1',
      '10.0.0.1',
      '192.168.0.1',
      '172.20.0.1',
      'fd00::1',
      '::ffff:127.0.0.1',
      '8.8.8.8',
    ]) {
      expect(checkAddress(a, sandbox).allowed, a).toBe(true);
    }
    for (const a of ['169.254.169.254', 'fe80::1', '100.64.0.1', '0.0.0.0', '224.0.0.1', '::'])
      expect(checkAddress(a, sandbox).allowed, a).toBe(false);
  });

  it('the operator allow-list opts ranges back in, in either mode, IPv4-mapped addresses included', () => {
    const policy: CallbackPolicy = { mode: 'live', allow: parseCidrList('10.1.0.0/16, 127.0.0.1 fd00:1::/32') };
    expect(checkAddress('10.1.200.3', policy).allowed).toBe(true);
    expect(checkAddress('10.2.0.1', policy).allowed).toBe(false);
    expect(checkAddress('127.0.0.1', policy).allowed).toBe(true);
    expect(checkAddress('127.0.0.2', policy).allowed).toBe(false);
    expect(checkAddress('::ffff:127.0.0.1', policy).allowed).toBe(true);
    expect(checkAddress('fd00:1:2::3', policy).allowed).toBe(true);
    expect(checkAddress('fd00:2::3', policy).allowed).toBe(false);
    expect(
      checkAddress('169.254.169.254', { mode: 'sandbox', allow: parseCidrList('169.254.169.254/32') }).allowed,
    ).toBe(true);
  });

  it('refuses text that is not an address', () => {
    expect(checkAddress('example.com', sandbox)).toMatchObject({ allowed: false });
  });
});

describe('parseCidr', () => {
  it('reads ranges and bare addresses', () => {
    expect(parseCidr('10.0.0.0/8')).toMatchObject({ family: 4, prefix: 8 });
    expect(parseCidr('203.0.113.7')).toMatchObject({ family: 4, prefix: 32 });
    expect(parseCidr('::1')).toMatchObject({ family: 6, prefix: 128 });
    expect(parseCidr('fd00::/8')).toMatchObject({ family: 6, prefix: 8 });
    expect(parseCidr('0.0.0.0/0')).toMatchObject({ prefix: 0 });
    expect(parseCidrList('')).toEqual([]);
  });

  it.each(['10.0.0.0/33', '::/129', 'example.com/8', '10.0.0.0/', '10.0.0.0/8/8', '10.0.0.0/x', '300.0.0.0/8'])(
    'refuses %s with a fix-it message',
    (bad) => {
      expect(() => parseCidr(bad)).toThrow(/is not an address range; write it like 10\.0\.0\.0\/8/);
    },
  );
});

describe('checkResolved (every address a name resolves to)', () => {
  it('refuses a name when any of its addresses is refused', () => {
    const v = checkResolved('rebind.example', ['93.184.216.34', '10.0.0.1'], live);
    expect(v).toMatchObject({ allowed: false, kind: 'private' });
    expect(!v.allowed && v.reason).toMatch(
      /^callback host rebind\.example resolves to 10\.0\.0\.1 is a private address/,
    );
    expect(checkResolved('ok.example', ['93.184.216.34', '2606:4700::1'], live).allowed).toBe(true);
    expect(checkResolved('none.example', [], live).allowed).toBe(false);
  });
});

describe('safeLookup (the connect-time resolver)', () => {
  const fake =
    (answers: Record<string, Array<{ address: string; family: number }>>): Resolver =>
    (hostname, _options, callback) =>
      queueMicrotask(() =>
        answers[hostname]
          ? callback(null, answers[hostname])
          : callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }), []),
      );
  const lookupOnce = (lookup: ReturnType<typeof safeLookup>, host: string, all: boolean) =>
    new Promise<{ err: Error | null; result: unknown[] }>((resolve) =>
      (lookup as unknown as (h: string, o: object, cb: (err: Error | null, ...r: unknown[]) => void) => void)(
        host,
        { all },
        (err, ...result) => resolve({ err, result }),
      ),
    );

  it('hands the socket exactly the checked addresses', async () => {
    const lookup = safeLookup(
      live,
      fake({
        'merchant.example': [
          { address: '93.184.216.34', family: 4 },
          { address: '2606:4700::1', family: 6 },
        ],
      }),
    );
    expect(await lookupOnce(lookup, 'merchant.example', true)).toEqual({
      err: null,
      result: [
        [
          { address: '93.184.216.34', family: 4 },
          { address: '2606:4700::1', family: 6 },
        ],
      ],
    });
    expect(await lookupOnce(lookup, 'merchant.example', false)).toEqual({ err: null, result: ['93.184.216.34', 4] });
  });

  it('refuses a name that resolves to an internal address (DNS rebinding, metadata)', async () => {
    const lookup = safeLookup(
      live,
      fake({
        'evil.example': [
          { address: '93.184.216.34', family: 4 },
          { address: '169.254.169.254', family: 4 },
        ],
      }),
    );
    const { err } = await lookupOnce(lookup, 'evil.example', true);
    expect(err).toMatchObject({ name: 'CallbackRefusedError', code: 'CALLBACK_REFUSED' });
    expect(err!.message).toMatch(/evil\.example resolves to 169\.254\.169\.254 is a link-local address/);
  });

  it('passes resolver errors through', async () => {
    const { err } = await lookupOnce(safeLookup(live, fake({})), 'nowhere.example', true);
    expect(err).toMatchObject({ code: 'ENOTFOUND' });
  });
});

describe('URL hosts', () => {
  it('numeric and hex IPv4 spellings normalise to dotted quads before the check sees them', () => {
    expect(new URL('http://2130706433/').hostname).toBe('127.0.0.1');
    expect(new URL('http://0x7f.1/').hostname).toBe('127.0.0.1');
    expect(new URL('http://[::ffff:127.0.0.1]/').hostname).toBe('[::ffff:7f00:1]');
    expect(checkAddress(new URL('http://[::ffff:127.0.0.1]/').hostname, live).allowed).toBe(false);
  });

  it('callbackHostOf is host[:port] in lower case', () => {
    expect(callbackHostOf('https://Merchant.Example/confirm')).toBe('merchant.example');
    expect(callbackHostOf('http://merchant.example:8080/x?y=1')).toBe('merchant.example:8080');
    expect(callbackHostOf('https://merchant.example:443/')).toBe('merchant.example');
    expect(callbackHostOf('not a url')).toBe('');
  });
});
