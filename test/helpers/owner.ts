/** An owner's sign-in as the operator and the owner give it: shared with the bench (support/owner-sign-in.ts). */
export { asBrowser, cookieOf, ownerKeyFile, setUpOwner, totp, type OwnerBrowser } from '../../support/owner-sign-in';
