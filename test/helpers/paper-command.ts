import type { BridgeCommand } from '../../src/domain/bridge-protocol';

let seq = 0;

/** A bridge command for the paper terminal's account `acc-1` (a buy of 0.1 EURUSD unless told), due in a minute. */
export function paperCommand(over: Partial<BridgeCommand> = {}): BridgeCommand {
  seq++;
  const now = Date.now();
  return {
    commandId: `signal/s${seq}/account/acc-1`,
    seq,
    signalId: `s${seq}`,
    accountId: 'acc-1',
    action: 'buy',
    symbol: 'EURUSD',
    volume: 0.1,
    acceptedAt: new Date(now).toISOString(),
    expiresAt: new Date(now + 60_000).toISOString(),
    ...over,
  };
}
