import { z } from 'zod';
import { riskSettingsSchema, symbolMapSchema } from './risk-settings';

/** What the registry holds: trading accounts, webhook secrets, API tokens. The import document of the admin CLI. */

export const ACCOUNT_ID_PATTERN = /^[A-Za-z0-9._-]{1,64}$/;
/** Features a bridge may announce in its hello's capabilities (docs/bridge-protocol.md). */
export const BRIDGE_FEATURES = [
  'risk_sizing',
  'loss_guards',
  'position_limits',
  'stop_out',
  'trade_events',
  // Trade management (protocol 1.6; docs/trade-management.md).
  'trailing_stop',
  'breakeven_trigger',
  'take_profit_levels',
  'close_opposite',
  'max_spread',
] as const;
export type BridgeFeature = (typeof BRIDGE_FEATURES)[number];

const semver = z.string().regex(/^\d+\.\d+\.\d+$/, 'a version like 2.0.0');

export const accountSchema = z.strictObject({
  id: z.string().regex(ACCOUNT_ID_PATTERN),
  owner: z.string().min(1).max(128),
  /** What the owner calls the account on the dashboard (the id is made for it, random). */
  name: z.string().min(1).max(64).optional(),
  platform: z.enum(['mt5', 'ctrader']),
  type: z.enum(['standard', 'copy_master']).default('standard'),
  status: z.enum(['active', 'locked']).default('active'),
  /**
   * Locked only until its bridge's first hello: an account an owner adds cannot trade before a bridge with its token
   * has connected; the hello unlocks it (docs/owners.md). An operator's lock or unlock clears it.
   */
  unlockOnHello: z.boolean().default(false),
  entitled: z.boolean().default(true),
  region: z.string().min(1).max(63).default('default'),
  bridgeVersion: semver.default('0.0.0'),
  /** What the bridge said it can do beyond the actions, in its last hello (`risk_sizing`, `loss_guards`). */
  bridgeFeatures: z.array(z.enum(BRIDGE_FEATURES)).max(16).default([]),
  /** What this account's venue offers, whatever the bridge could do. */
  venue: z.strictObject({ stopLimit: z.boolean().default(true), modifyPending: z.boolean().default(true) }).default({ stopLimit: true, modifyPending: true }),
  risk: riskSettingsSchema.default(riskSettingsSchema.parse({})),
  symbols: symbolMapSchema.default(symbolMapSchema.parse({})),
});
export type Account = z.infer<typeof accountSchema>;
export type Platform = Account['platform'];

const credential = z.string().min(16).max(256);

export const importDocumentSchema = z.strictObject({
  accounts: z.array(accountSchema.extend({ bridgeToken: credential.optional() })).default([]),
  secrets: z
    .array(z.strictObject({ secret: credential, owner: z.string().min(1).max(128), accounts: z.array(z.string().regex(ACCOUNT_ID_PATTERN)) }))
    .default([]),
  tokens: z
    .array(
      z.strictObject({
        token: credential,
        /** Whose token it is; it may grant only this owner's accounts. Omitted: the one owner of its accounts. */
        owner: z.string().min(1).max(128).optional(),
        accounts: z.array(z.string().regex(ACCOUNT_ID_PATTERN)),
        suspendedUntil: z.iso.datetime({ offset: true }).nullable().default(null),
      }),
    )
    .default([]),
});
export type ImportDocument = z.infer<typeof importDocumentSchema>;

/**
 * How a credential was made when the owner made it (the owner API, signed in or with an owner API key); absent on one
 * an operator imported or made, and on every one written before this was recorded. `owner reset` revokes those that
 * have it (docs/owners.md, "Resetting an owner").
 */
export interface MadeByOwner {
  createdVia: CreatedVia;
  createdAt: string;
}
export type CreatedVia = 'session' | 'api_key';

/** What a webhook secret grants: its owner and the accounts linked to it (many-to-many). */
export interface SecretGrant extends Partial<MadeByOwner> {
  hash: string;
  owner: string;
  accounts: string[];
}

/** What an API token grants: read access to these accounts' outcomes, all of one owner. */
export interface TokenGrant extends Partial<MadeByOwner> {
  hash: string;
  owner: string;
  accounts: string[];
  suspendedUntil: string | null;
}
