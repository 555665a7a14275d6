import { createHmac } from 'node:crypto';
import { signNotification } from '../domain/result-fields.js';

export interface NotificationRequest {
  body: string;
  headers: Record<string, string>;
}

export interface NotificationSource {
  event_id: string;
  order_id: string;
  seq: number;
  /** JSON object of the notification fields without signature, in wire order (outbox.payload). */
  payload: string;
}

/** The unsigned notification fields stored in an outbox row. */
export function payloadFields(payload: string): Record<string, string> {
  const fields: unknown = JSON.parse(payload);
  if (typeof fields !== 'object' || fields === null || Array.isArray(fields))
    throw new Error('outbox payload is not a JSON object');
  for (const [k, v] of Object.entries(fields)) {
    if (typeof v !== 'string') throw new Error(`outbox payload field ${k} is not a string`);
  }
  return fields as Record<string, string>;
}

/** Standard Webhooks: `v1,` + base64 HMAC-SHA256 of `${id}.${timestamp}.${body}`, keyed with the api_key's UTF-8 bytes. */
export function webhookSignature(id: string, timestamp: string, body: string, apiKey: string): string {
  return `v1,${createHmac('sha256', Buffer.from(apiKey, 'utf8')).update(`${id}.${timestamp}.${body}`, 'utf8').digest('base64')}`;
}

/**
 * One attempt's request: the spec's form body (stored fields in order, then `signature`) and the
 * headers for de-duplication and replay protection. Signed here, at delivery time, with the key
 * passed in — the wallet's current key — so a rotated key takes effect on the next attempt.
 */
export function buildNotificationRequest(
  src: NotificationSource,
  apiKey: string,
  timestampSeconds: number,
): NotificationRequest {
  const fields = payloadFields(src.payload);
  const form = new URLSearchParams();
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  form.append('signature', signNotification(fields, apiKey));
  const body = form.toString();
  const timestamp = String(timestampSeconds);
  return {
    body,
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      'user-agent': 'payment-gateway-notifier/1',
      'webhook-id': src.event_id,
      'webhook-timestamp': timestamp,
      'webhook-signature': webhookSignature(src.event_id, timestamp, body, apiKey),
      'x-gateway-order-id': src.order_id,
      'x-gateway-sequence': String(src.seq),
    },
  };
}
