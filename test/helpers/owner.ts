import { seedOwner, type AccountSpec, type Fixture, type Stack } from './stack';
import { setUpOwner, type OwnerBrowser } from '../../support/owner-sign-in';
/** An owner's sign-in as the operator and the owner give it: shared with the bench (support/owner-sign-in.ts). */
export { asBrowser, cookieOf, ownerKeyFile, setUpOwner, totp, type OwnerBrowser } from '../../support/owner-sign-in';

/** A fresh owner with accounts (seedOwner), signed in to the dashboard. */
export async function signedInOwner(stack: Stack, specs?: AccountSpec[]): Promise<{ f: Fixture; browser: OwnerBrowser }> {
  const f = await seedOwner(stack.registry, specs);
  return { f, browser: await setUpOwner(stack.ingress.url, stack.config.redis.url, f.owner) };
}
