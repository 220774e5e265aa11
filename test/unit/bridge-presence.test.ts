import { BridgePresence, isOnline, ONLINE_WITHIN_MS, type LastSeenStore, type SeenAccount } from '../../src/bridge/presence';

/** The page's online state from the ingress's writes: a waiting poll counts as seen now; a closed one stops the clock. */

class Store implements LastSeenStore {
  readonly at = new Map<string, { atMs: number; owner: string }>();
  writes = 0;
  async record(accountId: string, atMs: number, owner: string): Promise<void> {
    this.writes++;
    this.at.set(accountId, { atMs, owner });
  }
  async lastSeen(accounts: readonly SeenAccount[]): Promise<(Date | undefined)[]> {
    return accounts.map((a) => {
      const seen = this.at.get(a.id);
      return seen?.owner === a.owner ? new Date(seen.atMs) : undefined;
    });
  }
}

const A = { id: 'a', owner: 'alice' };

function setUp() {
  let now = 1_000_000;
  const store = new Store();
  const presence = new BridgePresence(60_000, store, 2_000, () => now);
  presence.stop(); // the test flushes by hand
  const online = async () => isOnline((await store.lastSeen([A]))[0], new Date(now));
  return { store, presence, online, advance: (ms: number) => (now += ms) };
}

describe('bridge presence', () => {
  it('a bridge waiting in a long poll stays online past the window; once the poll closes, offline within the window', async () => {
    const { presence, online, advance } = setUp();
    const ended = presence.pollOpened(A);
    await expect(online()).resolves.toBe(true);
    for (let t = 0; t < 25_000; t += 2_000) {
      advance(2_000);
      await presence.flush();
      await expect(online()).resolves.toBe(true);
    }
    ended();
    await presence.flush();
    advance(ONLINE_WITHIN_MS);
    await expect(online()).resolves.toBe(true);
    advance(1);
    await expect(online()).resolves.toBe(false);
  });

  it('two polls of one account (a reconnect): the older one closing leaves the newer one counted', async () => {
    const { presence, online, advance } = setUp();
    const older = presence.pollOpened(A);
    presence.pollOpened(A);
    older();
    older();
    advance(20_000);
    await presence.flush();
    await expect(online()).resolves.toBe(true);
  });

  it('calls cost one write per account per flush, not one per call', async () => {
    const { presence, store, advance } = setUp();
    for (let i = 0; i < 100; i++) {
      presence.seen(A);
      advance(10);
    }
    expect(store.writes).toBe(1);
    await presence.flush();
    await presence.flush();
    expect(store.writes).toBe(2);
  });

  it("an account that changed hands: what the old owner's bridge was seen doing is written for the old owner, and the new owner's bridge is written at once", async () => {
    const { presence, store, advance } = setUp();
    const ended = presence.pollOpened(A);
    // The owner change cleared last-seen; a flush already under way writes the old owner's bridge again.
    store.at.delete('a');
    advance(2_000);
    await presence.flush();
    const bob = { id: 'a', owner: 'bob' };
    expect(await store.lastSeen([bob])).toEqual([undefined]);
    ended();
    presence.seen(bob);
    expect(await store.lastSeen([bob])).toEqual([expect.any(Date)]);
    expect(await store.lastSeen([A])).toEqual([undefined]);
  });
});
