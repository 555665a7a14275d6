import { createCipheriv, createVerify, generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { rsaSha256Sign } from '../pem.js';
import { authorization, decryptResource, paySign, requestMessage, verifyProblem, wechatTime } from './sign.js';

const { privateKey, publicKey } = generateKeyPairSync('rsa', {
  modulusLength: 2048,
  privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  publicKeyEncoding: { type: 'spki', format: 'pem' },
});

describe('WeChat Pay API v3 signatures', () => {
  it('a request signs five lines, each ending in \\n, the body as sent (empty for a GET)', () => {
    expect(
      requestMessage(
        'GET',
        '/v3/pay/transactions/out-trade-no/1217752501201407033233368018?mchid=1230000109',
        1554208460,
        '593BEC0C930BF1AFEB40B4A08C8FB242',
        '',
      ),
    ).toBe(
      'GET\n/v3/pay/transactions/out-trade-no/1217752501201407033233368018?mchid=1230000109\n1554208460\n593BEC0C930BF1AFEB40B4A08C8FB242\n\n',
    );
    expect(
      authorization({
        mchid: '1900009191',
        serial_no: '1DDE55AD98ED71D6EDD4A4A16996DE7B47773A8C',
        timestamp: 1554208460,
        nonce: 'N',
        signature: 'S',
      }),
    ).toBe(
      'WECHATPAY2-SHA256-RSA2048 mchid="1900009191",nonce_str="N",signature="S",timestamp="1554208460",serial_no="1DDE55AD98ED71D6EDD4A4A16996DE7B47773A8C"',
    );
  });

  it('an answer verifies only with the named key, a fresh timestamp, its exact body, and not as a probe', async () => {
    const now = 1_800_000_000;
    const body = '{"code_url":"weixin://wxpay/bizpayurl?pr=p4lpSuKzz"}';
    const h = {
      timestamp: String(now),
      nonce: 'abc',
      signature: await rsaSha256Sign(privateKey, `${now}\nabc\n${body}\n`),
      serial: 'PUB_KEY_ID_1',
    };
    const key = [{ id: 'PUB_KEY_ID_1', pem: publicKey }];
    expect(verifyProblem(h, body, key, now + 10)).toBeUndefined();
    expect(verifyProblem(h, `${body} `, key, now)).toMatch(/does not verify/);
    expect(verifyProblem(h, body, [{ ...key[0], id: 'PUB_KEY_ID_2' }], now)).toMatch(/not the configured PUB_KEY_ID_2/);
    expect(verifyProblem(h, body, key, now + 300)).toMatch(/5 minutes/);
    expect(verifyProblem({ ...h, signature: `WECHATPAY/SIGNTEST/${h.signature}` }, body, key, now)).toMatch(/probe/);
    // A 204's message is over an empty body.
    const empty = { ...h, signature: await rsaSha256Sign(privateKey, `${now}\nabc\n\n`) };
    expect(verifyProblem(empty, '', key, now)).toBeUndefined();
    // Of several keys, the one the serial names verifies; another key under that name does not.
    expect(verifyProblem(h, body, [{ id: 'CERT_SERIAL', pem: publicKey }, ...key], now)).toBeUndefined();
    expect(
      verifyProblem(
        { ...h, serial: 'CERT_SERIAL' },
        body,
        [
          {
            id: 'CERT_SERIAL',
            pem: generateKeyPairSync('rsa', { modulusLength: 2048 })
              .publicKey.export({ type: 'spki', format: 'pem' })
              .toString(),
          },
          ...key,
        ],
        now,
      ),
    ).toMatch(/does not verify/);
  });

  it("a notification resource opens with the APIv3 key (the tag is the ciphertext's last 16 bytes) and only with it", () => {
    const key = '0123456789abcdefghijklmnopqrstuv';
    const cipher = createCipheriv('aes-256-gcm', Buffer.from(key), Buffer.from('fdasflkja484')).setAAD(
      Buffer.from('transaction'),
    );
    const ciphertext = Buffer.concat([
      cipher.update('{"out_trade_no":"1"}'),
      cipher.final(),
      cipher.getAuthTag(),
    ]).toString('base64');
    expect(decryptResource(key, { ciphertext, nonce: 'fdasflkja484', associated_data: 'transaction' })).toBe(
      '{"out_trade_no":"1"}',
    );
    expect(() => decryptResource(key, { ciphertext, nonce: 'fdasflkja484', associated_data: 'refund' })).toThrow();
    expect(() =>
      decryptResource('0123456789abcdefghijklmnopqrstuw', {
        ciphertext,
        nonce: 'fdasflkja484',
        associated_data: 'transaction',
      }),
    ).toThrow();
  });

  it("JSAPI's paySign covers appId, timeStamp, nonceStr and package, a line each", async () => {
    const p = {
      appId: 'wx8888888888888888',
      timeStamp: '1414561699',
      nonceStr: '5K8264ILTKCH16CQ2502SI8ZNMTM67VS',
      package: 'prepay_id=wx201410272009395522657a690389285100',
    };
    const sig = await paySign(privateKey, p);
    expect(
      createVerify('RSA-SHA256')
        .update(`${p.appId}\n${p.timeStamp}\n${p.nonceStr}\n${p.package}\n`)
        .verify(publicKey, sig, 'base64'),
    ).toBe(true);
  });

  it('times are RFC 3339 in Beijing time', () => {
    expect(wechatTime(Date.UTC(2026, 10, 24, 18, 30, 5))).toBe('2026-11-25T02:30:05+08:00');
  });
});
