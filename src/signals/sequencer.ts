import type { Redis } from 'ioredis';

/** Hands out each account's acceptance order: the order in which its bridge must execute its commands. */
export interface AccountSequencer {
  next(accountIds: readonly string[]): Promise<number[]>;
}

export class RedisAccountSequencer implements AccountSequencer {
  constructor(private readonly redis: Redis) {}

  async next(accountIds: readonly string[]): Promise<number[]> {
    if (accountIds.length === 0) return [];
    const pipeline = this.redis.pipeline();
    for (const id of accountIds) pipeline.incr(`es:seq:{${id}}`);
    const results = (await pipeline.exec()) ?? [];
    return results.map(([err, value]) => {
      if (err) throw err;
      return Number(value);
    });
  }
}
