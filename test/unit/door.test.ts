import { AcceptanceDoor, DOOR_TUNING, decideDoor, type DoorBounds, type DoorReading } from '../../src/signals/door';

const bounds: DoorBounds = { ...DOOR_TUNING, minReplicas: 0 };
const calm: DoorReading = { pendingStarts: 0, oldestPendingStartMs: 0, redisMemoryUsed: 0.2, connectedReplicas: 0 };

describe('the door decides from one reading', () => {
  test('when Temporal has been away for a minute at 10 signals a second, then the door is open: the starts wait in Redis', () => {
    expect(decideDoor({ ...calm, pendingStarts: 600, oldestPendingStartMs: 60_000 }, bounds)).toEqual({ admitted: true });
  });

  test('when Redis has no maxmemory, then memory never shuts the door', () => {
    expect(decideDoor({ ...calm, redisMemoryUsed: undefined }, bounds)).toEqual({ admitted: true });
  });

  test('when Redis memory reaches 90 % of maxmemory, then 503 for 30 s (just below: open)', () => {
    expect(decideDoor({ ...calm, redisMemoryUsed: 0.9 }, bounds)).toEqual({ admitted: false, retryAfterSeconds: 30, reason: 'redis_memory' });
    expect(decideDoor({ ...calm, redisMemoryUsed: 0.899 }, bounds)).toEqual({ admitted: true });
  });

  test('when fewer replicas are connected than REDIS_MIN_REPLICAS_ACK asks, then 503 (as many: open)', () => {
    const two = { ...bounds, minReplicas: 2 };
    expect(decideDoor({ ...calm, connectedReplicas: 1 }, two)).toEqual({ admitted: false, retryAfterSeconds: 1, reason: 'redis_replicas' });
    expect(decideDoor({ ...calm, connectedReplicas: 2 }, two)).toEqual({ admitted: true });
  });

  test('when the unstarted signals pass their bound, then 503 with a Retry-After from the backlog age (at the bound: open)', () => {
    expect(decideDoor({ ...calm, pendingStarts: 20_000, oldestPendingStartMs: 40_000 }, bounds)).toEqual({ admitted: true });
    expect(decideDoor({ ...calm, pendingStarts: 20_001, oldestPendingStartMs: 40_000 }, bounds)).toEqual({
      admitted: false,
      retryAfterSeconds: 4,
      reason: 'start_backlog',
    });
  });

  test('when the oldest unstarted signal is older than any command lives (5 min), then 503 for at most 30 s', () => {
    expect(decideDoor({ ...calm, pendingStarts: 1, oldestPendingStartMs: 300_000 }, bounds)).toEqual({ admitted: true });
    expect(decideDoor({ ...calm, pendingStarts: 1, oldestPendingStartMs: 300_001 }, bounds)).toEqual({
      admitted: false,
      retryAfterSeconds: 30,
      reason: 'start_backlog_age',
    });
  });
});

describe('the door over its readings', () => {
  test('when no reading was ever had (Redis away), then nothing is admitted; when one comes, the door follows it', async () => {
    let reading: DoorReading | Error = new Error('Connection is closed.');
    const changes: (string | undefined)[] = [];
    const door = new AcceptanceDoor(
      async () => {
        if (reading instanceof Error) throw reading;
        return reading;
      },
      bounds,
      Date.now,
      (shut) => changes.push(shut),
    );
    expect(await door.decide()).toEqual({ admitted: false, retryAfterSeconds: 1, reason: 'unknown' });
    reading = calm;
    expect(await door.decide()).toEqual({ admitted: true });
    expect(changes).toEqual(['unknown', undefined]);
  });

  test('when the last reading is older than 5 s (Redis stopped answering), then the door fails closed', async () => {
    let now = 1_000_000;
    let fail = false;
    const door = new AcceptanceDoor(
      async () => {
        if (fail) throw new Error('timeout');
        return calm;
      },
      bounds,
      () => now,
    );
    expect(await door.decide()).toEqual({ admitted: true });
    fail = true;
    now += 5_000;
    expect(await door.decide()).toEqual({ admitted: true });
    now += 1;
    expect(await door.decide()).toEqual({ admitted: false, retryAfterSeconds: 1, reason: 'unknown' });
  });
});
