import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { z } from 'zod';
import { takeSlot } from '../ratelimit/caps';
import { CALLBACK_EVENT_TYPES, wantsEvent, type CallbackEventType } from '../domain/callback';
import { ownerKeys } from '../redis-keys';

/** An owner's callback endpoint as stored: the secret only sealed (src/callbacks/secret-box.ts). */
export interface CallbackEndpoint {
  id: string;
  url: string;
  /** The signing secret, encrypted; opened only to sign. */
  sealedSecret: string;
  createdAt: string;
  enabled: boolean;
  /** The event types it wants; absent: every type (endpoints registered before types existed are so). */
  eventTypes?: CallbackEventType[];
}

/**
 * The endpoints of each owner, in Redis. Keyed by the owner string of the registry (accounts, secrets, tokens), so
 * signed-in owners can take them over as they are. The count per owner is bounded in the same step as the write
 * (`takeSlot`, the one check-and-charge of every cap).
 */
export interface EndpointStore {
  /** 'full' when the owner already has `max` endpoints. */
  add(owner: string, endpoint: CallbackEndpoint, max: number): Promise<'added' | 'full'>;
  list(owner: string): Promise<CallbackEndpoint[]>;
  get(owner: string, id: string): Promise<CallbackEndpoint | null>;
  remove(owner: string, id: string): Promise<boolean>;
  setEnabled(owner: string, id: string, enabled: boolean): Promise<boolean>;
  /**
   * The ids of each owner's enabled endpoints that want `type` (all of them without it), in one round trip: what the
   * accept path snapshots and what a trade event is delivered to.
   */
  enabledIds(owners: readonly string[], type?: CallbackEventType): Promise<string[][]>;
}

export const ENDPOINT_ID_PATTERN = /^ep_[A-Za-z0-9_-]{16}$/;

export function newEndpointId(): string {
  return `ep_${randomBytes(12).toString('base64url')}`;
}

/** The event types an endpoint may list at registration: at least one, each known (docs/callbacks.md). */
export const eventTypesSchema = z.array(z.enum(CALLBACK_EVENT_TYPES)).min(1).max(CALLBACK_EVENT_TYPES.length);

/** Each type once, in the order of CALLBACK_EVENT_TYPES: one list per choice, whatever the order given. */
export function normalEventTypes(types: readonly CallbackEventType[]): CallbackEventType[] {
  return CALLBACK_EVENT_TYPES.filter((t) => types.includes(t));
}

const endpointSchema = z.object({
  id: z.string().regex(ENDPOINT_ID_PATTERN),
  url: z.string(),
  sealedSecret: z.string(),
  createdAt: z.string(),
  enabled: z.boolean(),
  eventTypes: eventTypesSchema.optional(),
});

/** The hash tag keeps an owner's endpoints and attempts on one Redis Cluster slot. */
export const ownerKey = ownerKeys.callbacks;

const SET_ENABLED = `
local text = redis.call('HGET', KEYS[1], ARGV[1])
if not text then return 0 end
local endpoint = cjson.decode(text)
endpoint.enabled = ARGV[2] == '1'
redis.call('HSET', KEYS[1], ARGV[1], cjson.encode(endpoint))
return 1`;

export class RedisEndpointStore implements EndpointStore {
  constructor(private readonly redis: Redis) {}

  async add(owner: string, endpoint: CallbackEndpoint, max: number): Promise<'added' | 'full'> {
    const taken = await takeSlot(this.redis, { kind: 'hash', key: ownerKey(owner, 'ep'), max }, endpoint.id, JSON.stringify(endpoint));
    return taken.taken ? 'added' : 'full';
  }

  async list(owner: string): Promise<CallbackEndpoint[]> {
    const fields = await this.redis.hgetall(ownerKey(owner, 'ep'));
    return Object.values(fields)
      .flatMap(parse)
      .sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id));
  }

  async get(owner: string, id: string): Promise<CallbackEndpoint | null> {
    if (!ENDPOINT_ID_PATTERN.test(id)) return null;
    const text = await this.redis.hget(ownerKey(owner, 'ep'), id);
    return text === null ? null : (parse(text)[0] ?? null);
  }

  async remove(owner: string, id: string): Promise<boolean> {
    return (await this.redis.hdel(ownerKey(owner, 'ep'), id)) === 1;
  }

  async setEnabled(owner: string, id: string, enabled: boolean): Promise<boolean> {
    return (await this.redis.eval(SET_ENABLED, 1, ownerKey(owner, 'ep'), id, enabled ? '1' : '0')) === 1;
  }

  async enabledIds(owners: readonly string[], type?: CallbackEventType): Promise<string[][]> {
    if (owners.length === 0) return [];
    const pipeline = this.redis.pipeline();
    for (const owner of owners) pipeline.hvals(ownerKey(owner, 'ep'));
    const results = (await pipeline.exec()) ?? [];
    return results.map(([err, values]) => {
      if (err) throw err;
      return (values as string[])
        .flatMap(parse)
        .filter((e) => e.enabled && (type === undefined || wantsEvent(e, type)))
        .map((e) => e.id)
        .sort();
    });
  }
}

/** A record that does not parse is skipped: it can only be ours, damaged, and delivering to it is impossible anyway. */
function parse(text: string): CallbackEndpoint[] {
  try {
    const parsed = endpointSchema.safeParse(JSON.parse(text));
    return parsed.success ? [parsed.data] : [];
  } catch {
    return [];
  }
}
