// POST /v2/transaction, every field of the request: missing, empty, wrong JSON type, too long and
// malformed. Each refused request must leave no row behind.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rowCounts } from '../support/api.js';
import { ENGINES, startTestGateway, type TestGateway } from '../support/gateway.js';

const REQUIRED = [
  'user_id',
  'wallet_id',
  'payment_method',
  'amount',
  'return_url',
  'callback_url',
  'merchant_reference',
  'ip',
  'version',
  'product_name',
  'signature',
];
const OPTIONAL = ['backPage_url', 'present_qr', 'host_type'];
/** Fields a JSON number is tolerated in (its text is what is signed). */
const NUMBER_TOLERANT = ['amount', 'host_type', 'present_qr', 'version'];

const WRONG_TYPES: Array<[string, unknown]> = [
  ['a number', 123],
  ['a boolean', true],
  ['an object', { value: 'x' }],
  ['an array', ['x']],
];

const TOO_LONG: Array<[string, string]> = [
  ['user_id', 'U'.repeat(33)],
  ['wallet_id', 'W'.repeat(33)],
  ['payment_method', 'a'.repeat(33)],
  ['amount', '1'.repeat(21)],
  ['return_url', `https://merchantsite.com/${'r'.repeat(2030)}`],
  ['callback_url', `https://merchantsite.com/${'c'.repeat(2030)}`],
  ['backPage_url', `https://merchantsite.com/${'b'.repeat(2030)}`],
  ['merchant_reference', 'm'.repeat(65)],
  ['ip', '122.122.122.1.1.1'],
  ['product_name', 'p'.repeat(256)],
  ['signature', 'a'.repeat(1025)],
];

const MALFORMED: Array<[string, string]> = [
  ['amount', '-1'],
  ['amount', '+1'],
  ['amount', '1e2'],
  ['amount', '01.00'],
  ['amount', '1.234'],
  ['amount', ' 1'],
  ['amount', '1,00'],
  ['amount', '0'],
  ['amount', 'abc'],
  ['ip', '122.122.122'],
  ['ip', '256.1.1.1'],
  ['ip', '01.2.3.4'],
  ['ip', '::1'],
  ['ip', '::ffff:127.0.0.1'],
  ['ip', 'localhost'],
  ['ip', '1.2.3.4 '],
  ['version', '2'],
  ['version', '2.00'],
  ['version', '1.0'],
  ['version', 'v2.0'],
  ['return_url', 'merchantsite.com/checkout'],
  ['return_url', 'ftp://merchantsite.com/'],
  ['return_url', 'https://'],
  ['callback_url', 'javascript:alert(1)'],
  ['callback_url', 'https://merchant site.com/'],
  ['callback_url', 'https://merchantsite.com:99999/confirm'],
  ['callback_url', 'http://[fe80::1%25lo]/confirm'],
  ['return_url', 'https://merchantsite.com:65536/return'],
  ['backPage_url', 'https://[::1/back'],
  ['backPage_url', '/back'],
  ['merchant_reference', 'a b'],
  ['merchant_reference', 'a/b'],
  ['merchant_reference', 'ref?x=1'],
  ['merchant_reference', 'réf'],
  ['merchant_reference', '../x'],
  ['host_type', '0'],
  ['host_type', '2'],
  ['present_qr', '2'],
  ['present_qr', 'yes'],
  ['product_name', 'Pinot\u0001Noir'],
  // Half of a surrogate pair (JSON.stringify writes it as the escape \ud800): no character at all.
  ['product_name', 'Pinot\ud800Noir'],
  ['return_url', 'https://merchantsite.com/\udc00'],
  ['user_id', 'U1\u007f'],
];

describe.each(ENGINES)('create field validation on %s', (engine) => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway(engine);
  });
  afterAll(async () => gw?.close());

  /** A signed body with one field replaced (or removed when undefined); the signature itself too. */
  function withField(field: string, value: string | undefined): Record<string, string> {
    if (field !== 'signature') return gw.createBody({ [field]: value });
    const { signature: _s, ...body } = gw.createBody();
    return value === undefined ? body : { ...body, signature: value };
  }

  /** Posts and checks both the code and that no row was written. */
  async function refused(body: unknown, code: number, message: string): Promise<any> {
    const before = await rowCounts(gw);
    const reply = await gw.post('/v2/transaction', body);
    expect(reply).toMatchObject({ code, message });
    expect(reply.detail).toMatch(/\S/);
    expect(await rowCounts(gw)).toEqual(before);
    return reply;
  }

  it.each(REQUIRED)('missing %s answers 204', async (field) => {
    const reply = await refused(withField(field, undefined), 204, 'Some fields from input are null');
    expect(reply.detail).toContain(field);
  });

  it.each(REQUIRED)('empty %s answers 204', async (field) => {
    const reply = await refused(withField(field, ''), 204, 'Some fields from input are null');
    expect(reply.detail).toContain(field);
  });

  it.each(REQUIRED)('null %s counts as missing: 204', async (field) => {
    await refused({ ...gw.createBody(), [field]: null }, 204, 'Some fields from input are null');
  });

  const typeCases = [...REQUIRED, ...OPTIONAL].flatMap((field) =>
    WRONG_TYPES.filter(([what]) => !(what === 'a number' && NUMBER_TOLERANT.includes(field))).map(
      ([what, value]) => [field, what, value] as const,
    ),
  );
  it.each(typeCases)('%s as %s answers 207', async (field, _what, value) => {
    const reply = await refused({ ...gw.createBody(), [field]: value }, 207, 'Param is wrong');
    expect(reply.detail).toContain(field);
  });

  it.each(TOO_LONG)('%s too long answers 207', async (field, value) => {
    const reply = await refused(withField(field, value), 207, 'Param is wrong');
    expect(reply.detail).toContain(field);
  });

  it('ip of exactly 16 characters is not too long, but must still be an address', async () => {
    expect('255.255.255.255'.length).toBe(15);
    expect((await gw.post('/v2/transaction', gw.createBody({ ip: '255.255.255.255' }))).code).toBe(0);
    await refused(gw.createBody({ ip: '255.255.255.2555' }), 207, 'Param is wrong');
  });

  it.each(MALFORMED)('%s %j answers 207', async (field, value) => {
    const reply = await refused(
      gw.createBody({ [field]: value, ...(field === 'present_qr' && { payment_method: 'wechat' }) }),
      207,
      'Param is wrong',
    );
    expect(reply.detail).toContain(field);
  });

  it('a URL that does not parse is refused without its password in the detail (which the log line carries)', async () => {
    const reply = await refused(
      gw.createBody({ callback_url: 'https://shop:hunter2@merchantsite.com:99999/confirm' }),
      207,
      'Param is wrong',
    );
    expect(reply.detail).toBe(
      'callback_url is not a valid URL (check its host and port): https://***@merchantsite.com:99999/confirm',
    );
  });

  it('a JSON number amount with a malformed text answers 207', async () => {
    const body = JSON.stringify(gw.createBody()).replace(/"amount":"[^"]*"/, '"amount":1.5e2');
    await refused(body, 207, 'Param is wrong');
  });

  it('an empty host_type is hosted checkout', async () => {
    const reply = await gw.post('/v2/transaction', gw.createBody({ host_type: '' }));
    expect(reply).toMatchObject({ code: 0, host_url: `${gw.ctx.config.publicUrl}/v2/checkout` });
  });

  it('values at their maximum lengths are accepted', async () => {
    const reply = await gw.post(
      '/v2/transaction',
      gw.createBody({
        merchant_reference: `${'m'.repeat(60)}-_.:`,
        product_name: '葡'.repeat(255),
        return_url: `https://merchantsite.com/${'r'.repeat(2048 - 25)}`,
        amount: '999999999999.99',
      }),
    );
    expect(reply.code).toBe(0);
  });
});
