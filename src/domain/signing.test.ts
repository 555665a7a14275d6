import { describe, expect, it } from 'vitest';
import {
  cancelMessageCandidates,
  createResponseSignature,
  gatewayDataSignature,
  hmacHex,
  legacyCreateMessage,
  queryMessageCandidates,
  requestMessageCandidates,
  requestSignature,
  resultSignature,
  signatureMatchesAny,
  sortedParams,
  walletDetailMessageCandidates,
} from './signing.js';

// The published vectors (HMAC-SHA256, key 111222333), each built through the domain functions.
const KEY = '111222333';

const CREATE = {
  user_id: 'U000334333',
  wallet_id: 'W00000001',
  payment_method: 'alipay',
  amount: '120.00',
  return_url: 'https://merchantsite.com/checkout',
  callback_url: 'https://merchantsite.com/confirm',
  merchant_reference: 'dsi39ej430sks03',
  ip: '122.122.122.1',
  version: '2.0',
  product_name: 'Pinot Noir, Otago',
};
const CREATE_MESSAGE =
  'amount=120.00&callback_url=https://merchantsite.com/confirm&ip=122.122.122.1&merchant_reference=dsi39ej430sks03&payment_method=alipay&product_name=Pinot Noir, Otago&return_url=https://merchantsite.com/checkout&user_id=U000334333&version=2.0&wallet_id=W00000001111222333';
const CREATE_SIGNATURE = '8d1bea078eaacdae8388852851ec39e2e8561cdce64f359421d85ed4844496ec';
const RESULT_SIGNATURE = '840151e0dc39496e22b410b83058b4ddd633b786936c505ae978fae029a1e0f1';
const QUERY_SIGNATURE = '58f93f458880120d650611f2452917a25a39edc2f5e3a03baac73a7a49bc81f4';
const REFUND_SIGNATURE = '3052b51072570b743bf9a12a20a45b0adf280aee84907ef0e54d1079fb3f961c';
const CANCEL_SIGNATURE = 'da3b80be09665913e632f1bc0822e3d98d8dd235aebeb6f532b6bb7e329b9635';

describe('request signatures (published vectors)', () => {
  it('create: sorted name=value pairs with the key appended', () => {
    expect(sortedParams(CREATE) + KEY).toBe(CREATE_MESSAGE);
    expect(requestSignature(CREATE, KEY)).toBe(CREATE_SIGNATURE);
    expect(requestSignature({ ...CREATE, signature: 'ignored' }, KEY)).toBe(CREATE_SIGNATURE);
    expect(signatureMatchesAny(CREATE_SIGNATURE, KEY, requestMessageCandidates(CREATE, KEY))).toBe(true);
  });

  it('refund', () => {
    const refund = {
      user_id: 'U000334333',
      order_id: '23479798sdf7987234',
      refund_amount: '120.00',
      reference: 'notes about this refund',
    };
    expect(requestSignature(refund, KEY)).toBe(REFUND_SIGNATURE);
    expect(signatureMatchesAny(REFUND_SIGNATURE, KEY, requestMessageCandidates(refund, KEY))).toBe(true);
  });

  it('sorts by code unit, uppercase first, and leaves out null, undefined and empty values', () => {
    expect(sortedParams({ back_url: 'b', backPage_url: 'a', Z: 'z', a: '1' })).toBe(
      'Z=z&a=1&backPage_url=a&back_url=b',
    );
    expect(sortedParams({ a: '1', b: '', c: null, d: undefined, signature: 'x' })).toBe('a=1');
    expect(sortedParams({ a: '1', b: '', c: null, d: undefined }, true)).toBe('a=1&b=');
    // UTF-16 code units, not code points: U+1F600 (D83D DE00) sorts before U+FFFF.
    expect(sortedParams({ '\uFFFF': '2', '\u{1F600}': '1' })).toBe('\u{1F600}=1&\uFFFF=2');
  });

  it('accepts an empty field left out of the message or kept as name=', () => {
    const withEmpty = { ...CREATE, backPage_url: '' };
    const candidates = requestMessageCandidates(withEmpty, KEY);
    expect(candidates).toEqual([CREATE_MESSAGE, sortedParams(withEmpty, true) + KEY]);
    expect(candidates[1]).toContain('&backPage_url=&');
    const kept = hmacHex(KEY, candidates[1]);
    expect(signatureMatchesAny(CREATE_SIGNATURE, KEY, candidates)).toBe(true);
    expect(signatureMatchesAny(kept, KEY, candidates)).toBe(true);
    // Without an empty field there is one form only.
    expect(requestMessageCandidates(CREATE, KEY)).toEqual([CREATE_MESSAGE]);
  });
});

// Vectors computed with `printf %s MESSAGE | openssl dgst -sha256 -hmac 111222333`, not with this code.
describe("legacy create signature (the original service's concatenation form)", () => {
  it('is user_id + wallet_id + amount + payment_method + return_url + callback_url, keyed with the key, nothing appended', () => {
    const message = 'U000334333W00000001120.00alipayhttps://merchantsite.com/checkouthttps://merchantsite.com/confirm';
    expect(legacyCreateMessage(CREATE)).toBe(message);
    expect(hmacHex(KEY, legacyCreateMessage(CREATE))).toBe(
      'c2c152fe0f3a3eebc3b75a4655db50ceec9b88745e38d02a007a58e0df75c874',
    );
  });

  it("the original's documentation example (its printed signature lost its first character, a)", () => {
    const example = {
      user_id: 'U000000001',
      wallet_id: 'W00000001',
      amount: '0.01',
      payment_method: 'alipay',
      return_url: 'http://merchant.com/return',
      callback_url: 'http://merchant.com/callback',
    };
    expect(legacyCreateMessage(example)).toBe(
      'U000000001W000000010.01alipayhttp://merchant.com/returnhttp://merchant.com/callback',
    );
    expect(hmacHex(KEY, legacyCreateMessage(example))).toBe(
      'a2367bcd9e9a2f9a547c85d7545d1217702a574b8084bbb7ae33b45a03a89983',
    );
  });

  it('takes the amount as the client wrote it, and ignores every other field', () => {
    expect(legacyCreateMessage({ ...CREATE, amount: '120' })).toBe(
      'U000334333W00000001120alipayhttps://merchantsite.com/checkouthttps://merchantsite.com/confirm',
    );
    const withOtherFields = { ...CREATE, merchant_reference: 'other', product_name: 'other' };
    expect(legacyCreateMessage(withOtherFields)).toBe(legacyCreateMessage(CREATE));
  });
});

describe('wallet detail signature', () => {
  it('wallet_id + user_id as the shop plugins sign it, or the sorted form with the key appended', () => {
    const d = { wallet_id: 'W00000001', user_id: 'U000334333' };
    const candidates = walletDetailMessageCandidates(d, KEY);
    expect(candidates).toEqual(['W00000001U000334333', 'user_id=U000334333&wallet_id=W00000001111222333']);
    expect(
      signatureMatchesAny('fabdc81a57f2ebbfd0c878fab77effc7d16a66dcd7dc32df86f8bd2d038d3a4d', KEY, candidates),
    ).toBe(true);
    expect(
      signatureMatchesAny('c4318ddbc29e6166c4249c95facc93b99fc11b0933aa49bda07554f3ae31ecb8', KEY, candidates),
    ).toBe(true);
    expect(signatureMatchesAny(hmacHex(KEY, 'U000334333W00000001'), KEY, candidates)).toBe(false);
  });
});

describe('query signature candidates', () => {
  const q = { merchant_reference: '6000324', user_id: 'U000000013' };

  it('the sorted form (published vector)', () => {
    expect(queryMessageCandidates(q, KEY)[0]).toBe('merchant_reference=6000324&user_id=U000000013111222333');
    expect(signatureMatchesAny(QUERY_SIGNATURE, KEY, queryMessageCandidates(q, KEY))).toBe(true);
  });

  it('the concatenation form, keyed but without the key appended', () => {
    const concat = hmacHex(KEY, '6000324U000000013');
    expect(signatureMatchesAny(concat, KEY, queryMessageCandidates(q, KEY))).toBe(true);
    expect(signatureMatchesAny(hmacHex(KEY, `6000324U000000013${KEY}`), KEY, queryMessageCandidates(q, KEY))).toBe(
      false,
    );
  });

  it('with is_block: signed with or without it', () => {
    const blocking = { ...q, is_block: '1' };
    const withIsBlock = requestSignature(blocking, KEY);
    expect(sortedParams(blocking)).toBe('is_block=1&merchant_reference=6000324&user_id=U000000013');
    expect(signatureMatchesAny(withIsBlock, KEY, queryMessageCandidates(blocking, KEY))).toBe(true);
    expect(signatureMatchesAny(QUERY_SIGNATURE, KEY, queryMessageCandidates(blocking, KEY))).toBe(true);
    // is_block only counts when it was sent.
    expect(signatureMatchesAny(withIsBlock, KEY, queryMessageCandidates(q, KEY))).toBe(false);
  });

  it('with an empty is_block: signed without it (the spec) or with `is_block=` kept', () => {
    const empty = { ...q, is_block: '' };
    expect(signatureMatchesAny(QUERY_SIGNATURE, KEY, queryMessageCandidates(empty, KEY))).toBe(true);
    const kept = hmacHex(KEY, `is_block=&merchant_reference=6000324&user_id=U000000013${KEY}`);
    expect(signatureMatchesAny(kept, KEY, queryMessageCandidates(empty, KEY))).toBe(true);
    expect(signatureMatchesAny(kept, KEY, queryMessageCandidates(q, KEY))).toBe(false);
  });
});

describe('cancel signature candidates', () => {
  const c = { merchant_reference: '9872428736782682', user_id: 'U000000013' };

  it('user_id first (published vector)', () => {
    expect(cancelMessageCandidates(c, KEY)[1]).toBe('user_id=U000000013&merchant_reference=9872428736782682111222333');
    expect(signatureMatchesAny(CANCEL_SIGNATURE, KEY, cancelMessageCandidates(c, KEY))).toBe(true);
  });

  it('the sorted form', () => {
    expect(signatureMatchesAny(requestSignature(c, KEY), KEY, cancelMessageCandidates(c, KEY))).toBe(true);
  });

  it('no other order or key', () => {
    expect(
      signatureMatchesAny(
        CANCEL_SIGNATURE,
        KEY,
        cancelMessageCandidates({ ...c, merchant_reference: '9872428736782683' }, KEY),
      ),
    ).toBe(false);
    expect(signatureMatchesAny(CANCEL_SIGNATURE, 'other', cancelMessageCandidates(c, 'other'))).toBe(false);
  });
});

describe('result signatures', () => {
  const result = {
    merchant_reference: 'dsi39ej430sks03',
    payment_method: 'alipay',
    status: 'paid',
    currency: 'NZD',
    amount: '120.00',
  };

  it('notification / redirection / query: fields concatenated, keyed only (published vector)', () => {
    expect(resultSignature(result, KEY)).toBe(RESULT_SIGNATURE);
    expect(hmacHex(KEY, 'dsi39ej430sks03alipaypaidNZD120.00')).toBe(RESULT_SIGNATURE);
  });

  it('the amount text is part of the message', () => {
    expect(resultSignature({ ...result, amount: '120' }, KEY)).not.toBe(RESULT_SIGNATURE);
  });

  it('creation response: nonce then host_url', () => {
    expect(createResponseSignature('abc', 'https://gw/v2/checkout', KEY)).toBe(
      hmacHex(KEY, 'abchttps://gw/v2/checkout'),
    );
  });

  it('gateway data: sorted non-empty fields, numbers as text, key appended', () => {
    const data = {
      order_id: 'O1',
      amount: '1.00',
      organisation_id: 7,
      amount_cny: null,
      currency_rate: null,
      qr_code_url: '',
      signature: 'x',
    };
    expect(gatewayDataSignature(data, KEY)).toBe(hmacHex(KEY, `amount=1.00&order_id=O1&organisation_id=7${KEY}`));
  });
});

describe('signatureMatchesAny', () => {
  const messages = [CREATE_MESSAGE];

  it('accepts the hex digest in either case', () => {
    expect(signatureMatchesAny(CREATE_SIGNATURE, KEY, messages)).toBe(true);
    expect(signatureMatchesAny(CREATE_SIGNATURE.toUpperCase(), KEY, messages)).toBe(true);
  });

  it.each([
    ['empty', ''],
    ['one character short', CREATE_SIGNATURE.slice(0, 63)],
    ['one character long', `${CREATE_SIGNATURE}0`],
    ['twice', CREATE_SIGNATURE + CREATE_SIGNATURE],
    ['not hex', `${CREATE_SIGNATURE.slice(0, 63)}g`],
    ['padded', ` ${CREATE_SIGNATURE.slice(1)}`],
    ['all zeros', '0'.repeat(64)],
    ['one digit off', `${CREATE_SIGNATURE.slice(0, 63)}${CREATE_SIGNATURE.endsWith('c') ? 'd' : 'c'}`],
    ['base64 of the digest', Buffer.from(CREATE_SIGNATURE, 'hex').toString('base64')],
  ])('refuses a signature that is %s', (_what, presented) => {
    expect(signatureMatchesAny(presented, KEY, messages)).toBe(false);
  });

  it('refuses when there is no message, or the key differs', () => {
    expect(signatureMatchesAny(CREATE_SIGNATURE, KEY, [])).toBe(false);
    expect(signatureMatchesAny(CREATE_SIGNATURE, '111222334', [CREATE_MESSAGE])).toBe(false);
  });

  it('matches any one of several candidates', () => {
    expect(signatureMatchesAny(CREATE_SIGNATURE, KEY, ['a', 'b', CREATE_MESSAGE])).toBe(true);
    expect(signatureMatchesAny(CREATE_SIGNATURE, KEY, ['a', 'b'])).toBe(false);
  });
});
