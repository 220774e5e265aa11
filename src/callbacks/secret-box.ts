import { randomBytes } from 'node:crypto';

/** Callback secrets at rest: sealed by the shared SecretBox (src/secret-box.ts) under CALLBACK_SECRET_KEY_FILE. */
export { SecretBox } from '../secret-box';

/** A new endpoint secret in the Standard Webhooks form: `whsec_` and the base64 of 32 random bytes. */
export function newEndpointSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}
