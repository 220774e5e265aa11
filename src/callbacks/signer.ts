import { Webhook } from 'standardwebhooks';

/** The Standard Webhooks headers of one delivery attempt (https://www.standardwebhooks.com). */
export interface SignedHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

/**
 * Signs one attempt: HMAC-SHA256 of `id.timestamp.body` under the endpoint's secret. The id stays the same on every
 * retry (receivers deduplicate on it); the timestamp is the attempt's, since receivers refuse stale ones.
 */
export function signCallback(secret: string, messageId: string, at: Date, body: string): SignedHeaders {
  return {
    'webhook-id': messageId,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': new Webhook(secret).sign(messageId, at, body),
  };
}
