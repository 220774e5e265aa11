import { accountOfWakeChannel, bridgeKeys, ctraderKeys, ownerKeys, RATE_LIMIT_KEY_PREFIX, registryKeys, signalKeys } from '../../src/redis-keys';

/**
 * The keys are stored data: a deploy reads what the previous version wrote. Each string is pinned here, so renaming a
 * key's name in the code is free and changing its string fails.
 */
describe('the Redis keys', () => {
  const a = 'acc-1';
  test('when an account is given, then its bridge keys are the strings of every earlier version, all on its hash tag', () => {
    const keys = {
      commandQueue: bridgeKeys.commandQueue(a),
      commandRecord: bridgeKeys.commandRecord(a, 'signal/s/account/acc-1'),
      bridgeSession: bridgeKeys.bridgeSession(a),
      longPollGeneration: bridgeKeys.longPollGeneration(a),
      handedOutSeq: bridgeKeys.handedOutSeq(a),
      orphanReports: bridgeKeys.orphanReports(a),
      sequence: bridgeKeys.sequence(a),
      dataGeneration: bridgeKeys.dataGeneration(a),
      pendingMarks: bridgeKeys.pendingMarks(a),
      wakeChannel: bridgeKeys.wakeChannel(a),
      figures: bridgeKeys.figures(a),
      stopOuts: bridgeKeys.stopOuts(a),
      latestStopOut: bridgeKeys.latestStopOut(a),
      unauditedStopOuts: bridgeKeys.unauditedStopOuts(a),
      tradesPrefix: bridgeKeys.tradesPrefix(a),
    };
    expect(keys).toEqual({
      commandQueue: 'es:bq:{acc-1}',
      commandRecord: 'es:bc:{acc-1}:signal/s/account/acc-1',
      bridgeSession: 'es:bs:{acc-1}',
      longPollGeneration: 'es:bw:{acc-1}',
      handedOutSeq: 'es:bh:{acc-1}',
      orphanReports: 'es:bo:{acc-1}',
      sequence: 'es:seq:{acc-1}',
      dataGeneration: 'es:bg:{acc-1}',
      pendingMarks: 'es:bp:{acc-1}',
      wakeChannel: 'es:bn:{acc-1}',
      figures: 'es:figures:{acc-1}',
      stopOuts: 'es:stop-outs:{acc-1}',
      latestStopOut: 'es:stop-out-latest:{acc-1}',
      unauditedStopOuts: 'es:stop-outs-unaudited:{acc-1}',
      tradesPrefix: 'es:trades:{acc-1}:',
    });
    // One Lua script touches several of them: one Redis Cluster slot.
    expect(Object.values(keys).every((k) => k.includes('{acc-1}'))).toBe(true);
  });

  test('when a wake channel is read back, then it names its account; any other channel names none', () => {
    expect(accountOfWakeChannel(bridgeKeys.wakeChannel('acc-{x}'))).toBe('acc-{x}');
    expect(accountOfWakeChannel(bridgeKeys.commandQueue(a))).toBeUndefined();
    expect(accountOfWakeChannel(ctraderKeys.linksChanged)).toBeUndefined();
  });

  test('when the registry, owners, cTrader links and signals are keyed, then they are the strings of every earlier version', () => {
    expect([
      registryKeys.account(a),
      registryKeys.accounts,
      registryKeys.secret('h'),
      registryKeys.token('h'),
      registryKeys.bridgeToken('h'),
      registryKeys.accountBridgeToken(a),
      registryKeys.retiredBridgeToken('h'),
      registryKeys.ownerAccountCap('o'),
      registryKeys.bridgeState(a),
      registryKeys.bridgeSeen(a),
      registryKeys.bridgeAnnounced(a),
      registryKeys.instruments(a),
      registryKeys.ownerIndex('secret', 'o'),
    ]).toEqual([
      'es:account:acc-1',
      'es:accounts',
      'es:secret:h',
      'es:token:h',
      'es:bridge:h',
      'es:account-bridge:acc-1',
      'es:bridge-retired:h',
      'es:owner-account-cap:o',
      'es:bridge-state:{acc-1}',
      'es:bridge-seen:{acc-1}',
      'es:bridge-announced:{acc-1}',
      'es:instruments:{acc-1}',
      'es:owner-index:secret:o',
    ]);
    expect([
      ownerKeys.owner('o'),
      ownerKeys.owners,
      ownerKeys.setup('h'),
      ownerKeys.audit('o'),
      ownerKeys.session('h'),
      ownerKeys.sessionsOf('o'),
      ownerKeys.apiKey('h'),
      ownerKeys.apiKeysOf('o'),
      ownerKeys.ctraderOAuthState('h'),
      ownerKeys.ctraderOAuthPending('h'),
      ownerKeys.callbacks('o', 'ep'),
      ownerKeys.callbacks('o', 'at'),
    ]).toEqual([
      'es:owner:o',
      'es:owners',
      'es:owner-setup:h',
      'es:owner-audit:o',
      'es:session:h',
      'es:owner-sessions:o',
      'es:owner-key:h',
      'es:owner-keys:o',
      'es:ctrader:oauth-state:h',
      'es:ctrader:oauth-pending:h',
      'es:cb:{o}:ep',
      'es:cb:{o}:at',
    ]);
    expect([ctraderKeys.links, ctraderKeys.linksChanged, ctraderKeys.link(a), ctraderKeys.byCtid(42)]).toEqual([
      'es:ctrader:links',
      'es:ctrader:links-changed',
      'es:ctrader:link:acc-1',
      'es:ctrader:ctid:42',
    ]);
    expect([signalKeys.reportedOutcomes('sig_1'), signalKeys.pendingStarts('q'), RATE_LIMIT_KEY_PREFIX]).toEqual([
      'es:ro:{sig_1}',
      { claims: 'es:starts:{q}', accepted: 'es:starts-accepted:{q}', inputs: 'es:start-inputs:{q}' },
      'es:rl:',
    ]);
  });
});
