import { revokedLines } from '../../src/owners/reset';

/** What `owner reset` prints of the credentials it revoked (src/owners/reset.ts). */
describe('revokedLines', () => {
  it('says when nothing was left to revoke', () => {
    expect(revokedLines([])).toEqual(['No credential made through the owner API was left to revoke.']);
  });

  it('lists each credential, and what a revoked bridge token means for its account', () => {
    expect(
      revokedLines([
        { kind: 'secret', id: '0123456789ab', accounts: ['acc-1', 'acc-2'], createdVia: 'session', createdAt: '2026-12-02T01:00:00.000Z' },
        { kind: 'bridge_token', id: 'ba9876543210', accounts: ['acc-2'], createdVia: 'api_key', createdAt: null },
      ]),
    ).toEqual([
      'Revoked 2 credential(s) made through the owner API:',
      '  secret 0123456789ab (acc-1, acc-2; made via session at 2026-12-02T01:00:00.000Z)',
      '  bridge_token ba9876543210 (acc-2; made via api_key)',
      "A revoked bridge token disconnects that account's bridge: once signed in, the owner downloads a new MT5 package or makes a new bridge token.",
    ]);
  });

  it('names no bridge when no bridge token was revoked', () => {
    const lines = revokedLines([{ kind: 'token', id: '0123456789ab', accounts: ['acc-1'], createdVia: 'api_key', createdAt: '2026-12-02T01:00:00.000Z' }]);
    expect(lines).toEqual([
      'Revoked 1 credential(s) made through the owner API:',
      '  token 0123456789ab (acc-1; made via api_key at 2026-12-02T01:00:00.000Z)',
    ]);
  });
});
