import { randomBytes } from 'node:crypto';
import { post, type HttpResult } from '../../support/http';

/** Trade events and books as a bridge sends them (protocol 1.5), for the trade journal's tests. */

export const sigId = (): string => `sig_${randomBytes(12).toString('hex')}`;
export const commandOf = (signalId: string, accountId: string): string => `signal/${signalId}/account/${accountId}`;
export const iso = (ms: number): string => new Date(ms).toISOString();
const unique = () => randomBytes(4).toString('hex');

export function opened(ticket: string, at: number, extra: Record<string, unknown> = {}): Record<string, unknown> & { eventId: string; at: string } {
  return { eventId: `deal:${unique()}`, type: 'position_opened', at: iso(at), ticket, symbol: 'EURUSD', side: 'buy', volume: 0.1, price: 1.08, ...extra };
}

export function closed(ticket: string, at: number, extra: Record<string, unknown> = {}): Record<string, unknown> & { eventId: string; at: string } {
  return {
    eventId: `deal:${unique()}`,
    type: 'position_closed',
    at: iso(at),
    ticket,
    symbol: 'EURUSD',
    volume: 0.1,
    remainingVolume: 0,
    price: 1.09,
    profit: 100,
    commission: -0.7,
    swap: 0,
    cause: 'take_profit',
    ...extra,
  };
}

/** A buy limit of 0.1 lots at 1.05, as an event and in a book. */
const AN_ORDER = { symbol: 'EURUSD', side: 'buy', orderType: 'limit', volume: 0.1, price: 1.05 };

export function placed(ticket: string, at: number, extra: Record<string, unknown> = {}): Record<string, unknown> & { eventId: string; at: string } {
  return {
    eventId: `order:${ticket}/placed`,
    type: 'order_placed',
    at: iso(at),
    ticket,
    ...AN_ORDER,
    ...extra,
  };
}

export function bookPosition(ticket: string, openedAt: number, extra: Record<string, unknown> = {}) {
  return {
    ticket,
    symbol: 'EURUSD',
    side: 'buy',
    volume: 0.1,
    openPrice: 1.08,
    sl: null,
    tp: null,
    openedAt: iso(openedAt),
    profit: 0,
    swap: 0,
    commission: 0,
    ...extra,
  };
}

export function bookOrder(ticket: string, placedAt: number) {
  return {
    ticket,
    ...AN_ORDER,
    stopLimitPrice: null,
    sl: null,
    tp: null,
    placedAt: iso(placedAt),
    expiresAt: null,
  };
}

export function sendTrades(ingressUrl: string, bridgeToken: string, body: unknown): Promise<HttpResult> {
  return post(`${ingressUrl}/bridge/v1/trades`, body, { authorization: `Bearer ${bridgeToken}` });
}
