import type { BridgeCommand, BridgeReport } from '../domain/bridge-protocol';

/** The log line a bridge writes for each command it answered: what it was told and what it reported, no secret. */
export function commandLogLine(time: string, accountId: string, command: Partial<BridgeCommand>, report: BridgeReport, replayed: boolean) {
  return {
    time,
    event: 'command',
    accountId,
    commandId: report.commandId,
    seq: command.seq,
    action: command.action,
    symbol: command.symbol,
    status: report.status,
    ticket: report.ticket ?? null,
    price: report.price ?? null,
    volume: report.volume ?? null,
    retcode: report.retcode ?? null,
    message: report.message ?? null,
    replayed,
  };
}
