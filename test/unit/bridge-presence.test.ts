import { BridgePresence, isOnline, ONLINE_WITHIN_MS, type LastSeenStore } from '../../src/bridge/presence';

/** The page's online state from the ingress's writes: a waiting poll counts as seen now; a closed one stops the clock. */

class Store implements LastSeenStore {
  readonly at = new Map<string, number>();
  writes = 0;
  async record(accountId: string, atMs: number): Promise<void> {
    this.writes++;
    this.at.set(accountId, atMs);
  }
  async lastSeen(ids: readonly string[]): Promise<(Date | undefined)[]> {
    return ids.map((id) => (this.at.has(id) ? new Date(this.at.get(id)!) : undefined));
  }
}

function setUp() {
  let now = 1_000_000;
  const store = new Store();
  const presence = new BridgePresence(60_000, store, 2_000, () => now);
  presence.stop(); // the test flushes by hand
  const online = async () => isOnline((await store.lastSeen(['a']))[0], new Date(now));
  return { store, presence, online, advance: (ms: number) => (now += ms) };
}

describe('bridge presence', () => {
  it('a bridge waiting in a long poll stays online past the window; once the poll closes, offline within the window', async () => {
    const { presence, online, advance } = setUp();
    const ended = presence.pollOpened('a');
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
    const older = presence.pollOpened('a');
    presence.pollOpened('a');
    older();
    older();
    advance(20_000);
    await presence.flush();
    await expect(online()).resolves.toBe(true);
  });

  it('calls cost one write per account per flush, not one per call', async () => {
    const { presence, store, advance } = setUp();
    for (let i = 0; i < 100; i++) {
      presence.seen('a');
      advance(10);
    }
    expect(store.writes).toBe(1);
    await presence.flush();
    await presence.flush();
    expect(store.writes).toBe(2);
  });
});
