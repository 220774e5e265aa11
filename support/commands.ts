import type { BridgeCommand } from '../src/domain/bridge-protocol';

/** A bridge command as a workflow would queue it: a 0.01 lot EURUSD buy, numbered `seq`, valid until `deadlineMs`. */
export function buyCommand(accountId: string, seq: number, deadlineMs: number, signalPrefix = 'sig-test'): BridgeCommand {
  return {
    commandId: `signal/${signalPrefix}-${seq}/account/${accountId}`,
    seq,
    signalId: `${signalPrefix}-${seq}`,
    accountId,
    action: 'buy',
    symbol: 'EURUSD',
    volume: 0.01,
    acceptedAt: new Date().toISOString(),
    expiresAt: new Date(deadlineMs).toISOString(),
  };
}
