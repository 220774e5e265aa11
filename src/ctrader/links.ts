import type { Redis } from 'ioredis';
import type { SecretBox } from '../secret-box';
import { ctraderKeys } from '../redis-keys';

/**
 * cTrader accounts linked by their owner through "Connect with cTrader" (docs/ctrader-connector.md): what the
 * dashboard writes and the connector reads, in Redis. The OAuth tokens and the account's bridge token must be read
 * back by the connector, so they are sealed (the project's SecretBox, key CTRADER_TOKENS_KEY_FILE), each bound to its
 * account: a copy of Redis alone reveals none, and a sealed value moved to another account does not open.
 * A change is published on one channel (the account id only), so a running connector picks it up at once.
 */

export interface LinkTokens {
  accessToken: string;
  refreshToken: string;
  accessTokenExpiresAt?: number;
}

/** What anyone may see of a link: never a token. */
export interface LinkView {
  accountId: string;
  owner: string;
  ctidTraderAccountId: number;
  environment: 'demo' | 'live';
  traderLogin: number | null;
  broker: string | null;
  linkedAt: string;
  /** Set when cTrader stopped taking the tokens (revoked, refresh refused): the owner must connect again. */
  needsReauthorisation: { since: string; reason: string } | null;
}

/** What the connector needs to run one linked account. */
export interface OpenedLink extends LinkView {
  tokens: LinkTokens;
  bridgeToken: string;
  /** Bumped whenever the owner authorises again: the connector then takes the new tokens. */
  version: number;
}

export const LINKS_CHANGED_CHANNEL = ctraderKeys.linksChanged;

const key = {
  all: ctraderKeys.links,
  link: ctraderKeys.link,
  ctid: ctraderKeys.byCtid,
};
const binding = { tokens: (id: string) => `ctrader-tokens:${id}`, bridge: (id: string) => `ctrader-bridge:${id}` };

/** Writes tokens only if the owner did not authorise again meanwhile (a refresh must not undo a new grant). */
const SAVE_IF_VERSION = `
if redis.call('HGET', KEYS[1], 'version') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'tokens', ARGV[2])
return 1`;

export class CtraderLinks {
  constructor(
    private readonly redis: Redis,
    private readonly box: SecretBox,
  ) {}

  /** A new link (or a new grant for an account already linked): tokens replaced, re-authorisation cleared. */
  async save(link: Omit<LinkView, 'linkedAt' | 'needsReauthorisation'>, tokens: LinkTokens, bridgeToken: string | undefined, now: Date): Promise<void> {
    const id = link.accountId;
    const fields: Record<string, string> = {
      owner: link.owner,
      ctid: String(link.ctidTraderAccountId),
      environment: link.environment,
      traderLogin: link.traderLogin === null ? '' : String(link.traderLogin),
      broker: link.broker ?? '',
      linkedAt: now.toISOString(),
      tokens: this.box.seal(JSON.stringify(tokens), binding.tokens(id)),
    };
    if (bridgeToken !== undefined) fields.bridgeToken = this.box.seal(bridgeToken, binding.bridge(id));
    await this.redis
      .multi()
      .hset(key.link(id), fields)
      .hdel(key.link(id), 'reauth')
      .hincrby(key.link(id), 'version', 1)
      .set(key.ctid(link.ctidTraderAccountId), id)
      .sadd(key.all, id)
      .exec();
    await this.changed(id);
  }

  /** Undoes a link (after a failed link step, or an unlinked account). */
  async remove(accountId: string): Promise<void> {
    const ctid = await this.redis.hget(key.link(accountId), 'ctid');
    const tx = this.redis.multi().del(key.link(accountId)).srem(key.all, accountId);
    if (ctid) tx.del(key.ctid(Number(ctid)));
    await tx.exec();
    await this.changed(accountId);
  }

  /** The account a cTrader account is linked to, if any. */
  async accountOf(ctid: number): Promise<string | null> {
    return this.redis.get(key.ctid(ctid));
  }

  async view(accountId: string): Promise<LinkView | null> {
    const h = await this.redis.hgetall(key.link(accountId));
    return h.owner ? viewOf(accountId, h) : null;
  }

  /** Every link with its secrets opened (the connector). A link that does not open is left out and named. */
  async openAll(): Promise<{ links: OpenedLink[]; unreadable: string[] }> {
    const ids = (await this.redis.smembers(key.all)).sort();
    const pipeline = this.redis.pipeline();
    for (const id of ids) pipeline.hgetall(key.link(id));
    const results = (await pipeline.exec()) ?? [];
    const links: OpenedLink[] = [];
    const unreadable: string[] = [];
    results.forEach(([err, value], i) => {
      const id = ids[i]!;
      const h = value as Record<string, string>;
      if (err || !h.owner || !h.tokens || !h.bridgeToken) return;
      try {
        links.push({
          ...viewOf(id, h),
          tokens: JSON.parse(this.box.open(h.tokens, binding.tokens(id))) as LinkTokens,
          bridgeToken: this.box.open(h.bridgeToken, binding.bridge(id)),
          version: Number(h.version ?? 0),
        });
      } catch {
        unreadable.push(id);
      }
    });
    return { links, unreadable };
  }

  /** The connector's refreshed tokens; false when the owner authorised again meanwhile (the new grant wins). */
  async saveRefreshed(accountId: string, version: number, tokens: LinkTokens): Promise<boolean> {
    const sealed = this.box.seal(JSON.stringify(tokens), binding.tokens(accountId));
    return Number(await this.redis.eval(SAVE_IF_VERSION, 1, key.link(accountId), String(version), sealed)) === 1;
  }

  /** A new bridge token for a linked account (the owner rotated it): the connector reconnects with it. */
  async replaceBridgeToken(accountId: string, bridgeToken: string): Promise<boolean> {
    if ((await this.redis.exists(key.link(accountId))) !== 1) return false;
    await this.redis
      .multi()
      .hset(key.link(accountId), 'bridgeToken', this.box.seal(bridgeToken, binding.bridge(accountId)))
      .hincrby(key.link(accountId), 'version', 1)
      .exec();
    await this.changed(accountId);
    return true;
  }

  /** cTrader no longer takes this account's tokens (the reason is cTrader's error code, never a token). */
  async markNeedsReauthorisation(accountId: string, reason: string, now: Date): Promise<void> {
    if ((await this.redis.exists(key.link(accountId))) !== 1) return;
    await this.redis.hset(key.link(accountId), 'reauth', JSON.stringify({ since: now.toISOString(), reason: reason.slice(0, 200) }));
  }

  private async changed(accountId: string): Promise<void> {
    await this.redis.publish(LINKS_CHANGED_CHANNEL, accountId);
  }
}

function viewOf(accountId: string, h: Record<string, string>): LinkView {
  return {
    accountId,
    owner: h.owner!,
    ctidTraderAccountId: Number(h.ctid),
    environment: h.environment === 'live' ? 'live' : 'demo',
    traderLogin: h.traderLogin ? Number(h.traderLogin) : null,
    broker: h.broker || null,
    linkedAt: h.linkedAt ?? '',
    needsReauthorisation: h.reauth ? (JSON.parse(h.reauth) as { since: string; reason: string }) : null,
  };
}
