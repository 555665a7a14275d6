import { generateKeyPairSync } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { ChannelAccount } from '../../ports/connector.js';
import { ProviderHttp } from '../http.js';
import { readAnswer } from './client.js';
import { AlipayConnector } from './connector.js';
import { rsaSha256Sign } from '../pem.js';
import { alipayTime, extractSignedObject, notificationSignContent, requestSignContent, rsa2Verify } from './sign.js';

interface Vector {
  alipay_public_key: string;
  notifications: Array<{ valid: boolean; note: string; fields: Record<string, string> }>;
}
const vectors = JSON.parse(
  readFileSync(new URL('../../../../shared/vectors/alipay-notify.json', import.meta.url), 'utf8'),
) as Vector;

describe('the genuine Alipay notification (shared/vectors/alipay-notify.json)', () => {
  it.each(vectors.notifications.map((n) => [n.note, n] as const))('%s: verifies only when untampered', (_note, n) => {
    expect(rsa2Verify(vectors.alipay_public_key, notificationSignContent(n.fields), n.fields.sign)).toBe(n.valid);
  });

  it('the connector takes the genuine one and refuses the tampered copy', async () => {
    const connector = new AlipayConnector(new ProviderHttp(1000));
    const account: ChannelAccount = {
      wallet_id: 'W1',
      payment_method: 'alipay',
      provider: 'alipay',
      config: {
        app_id: vectors.notifications[0].fields.app_id,
        alipay_public_key: vectors.alipay_public_key,
        currency_mode: 'domestic',
      },
      secrets: {},
    };
    for (const n of vectors.notifications) {
      const read = await connector.readNotification({ headers: {}, body: new URLSearchParams(n.fields).toString() }, [
        account,
      ]);
      if (n.valid) {
        expect(read).toMatchObject({
          kind: 'event',
          event: {
            out_trade_no: '20190815155618536-564-57',
            state: { kind: 'paid', charge: { amount: 10, currency: 'CNY' } },
          },
        });
      } else {
        expect(read).toMatchObject({ kind: 'refused', reason: expect.stringMatching(/does not verify/) });
      }
    }
    // Signed for another app: refused before any key is tried.
    const other = await connector.readNotification(
      { headers: {}, body: new URLSearchParams(vectors.notifications[0].fields).toString() },
      [{ ...account, config: { ...account.config, app_id: '2021000000000009' } }],
    );
    expect(other).toMatchObject({ kind: 'refused', reason: expect.stringMatching(/no Alipay account has app_id/) });
  });
});

describe('request and answer signatures', () => {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    publicKeyEncoding: { type: 'spki', format: 'pem' },
  });

  it('a request signs every non-empty parameter but sign, sorted, values raw', async () => {
    const content = requestSignContent({
      method: 'alipay.trade.query',
      app_id: '1',
      sign: 'x',
      notify_url: '',
      biz_content: '{"a":"b&c=d"}',
      charset: 'utf-8',
    });
    expect(content).toBe('app_id=1&biz_content={"a":"b&c=d"}&charset=utf-8&method=alipay.trade.query');
    expect(rsa2Verify(publicKey, content, await rsaSha256Sign(privateKey, content))).toBe(true);
  });

  it('an answer is verified over the exact text of its response object, whatever it holds', async () => {
    const inner =
      '{"code":"10000","msg":"Success","qr_code":"https:\\/\\/qr.alipay.com\\/bax1","note":"a } and a \\" in a string","nested":{"x":{}}}';
    const body = `{"alipay_trade_precreate_response":${inner},"sign":"${await rsaSha256Sign(privateKey, inner)}"}`;
    expect(extractSignedObject(body, 'alipay_trade_precreate_response')).toBe(inner);
    const account: ChannelAccount = {
      wallet_id: 'W',
      payment_method: 'alipay',
      provider: 'alipay',
      config: { alipay_public_key: publicKey },
      secrets: {},
    };
    expect(readAnswer(account, 'alipay.trade.precreate', body)).toMatchObject({
      kind: 'success',
      body: { qr_code: 'https://qr.alipay.com/bax1' },
    });
    // One character changed after signing: no answer at all.
    expect(readAnswer(account, 'alipay.trade.precreate', body.replace('bax1', 'bax2'))).toMatchObject({
      kind: 'unknown',
    });
    // A second response object (a forged one appended) makes the answer unreadable, not trusted.
    expect(
      extractSignedObject(
        `${body.slice(0, -1)},"alipay_trade_precreate_response":{}}`,
        'alipay_trade_precreate_response',
      ),
    ).toBeUndefined();
    // A failure carrying no signature is read as Alipay's; a success without one is not.
    expect(
      readAnswer(
        account,
        'alipay.trade.query',
        '{"alipay_trade_query_response":{"code":"40004","sub_code":"ACQ.TRADE_NOT_EXIST","sub_msg":"no trade"}}',
      ),
    ).toMatchObject({ kind: 'failure', sub_code: 'ACQ.TRADE_NOT_EXIST', signed: false });
    expect(
      readAnswer(
        account,
        'alipay.trade.query',
        '{"alipay_trade_query_response":{"code":"10000","trade_status":"TRADE_SUCCESS"}}',
      ),
    ).toMatchObject({ kind: 'unknown' });
  });

  it('times are written in Beijing time whatever the server zone', () => {
    expect(alipayTime(Date.UTC(2026, 10, 24, 18, 30, 5))).toBe('2026-11-25 02:30:05');
  });
});
