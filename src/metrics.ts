import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { isReasonCode } from './domain/reason-codes';

/**
 * Prometheus metrics. Labels are only ever drawn from small fixed sets (route patterns, status codes, outcome,
 * reason codes, region names from config): never a secret, a token, an id or any free-form input.
 */

/** A reason as a label: our own codes as they are, every broker diagnostic as `broker`. */
export function reasonLabel(reason: string | null): string {
  if (reason === null) return 'none';
  if (isReasonCode(reason)) return reason;
  return reason.startsWith('broker:') ? 'broker' : 'other';
}

export function createIngressMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'external_signals_ingress_' });
  return {
    registry,
    requests: new Counter({
      name: 'external_signals_http_requests_total',
      help: 'HTTP requests by route pattern, method and status',
      labelNames: ['route', 'method', 'status'] as const,
      registers: [registry],
    }),
    acceptSeconds: new Histogram({
      name: 'external_signals_accept_seconds',
      help: 'Time to answer a webhook submission, by URL kind and status',
      labelNames: ['url', 'status'] as const,
      buckets: [0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5],
      registers: [registry],
    }),
    temporalStartErrors: new Counter({
      name: 'external_signals_temporal_start_errors_total',
      help: 'Failed starts of a signal in a region, by region and kind (backpressure or other)',
      labelNames: ['region', 'kind'] as const,
      registers: [registry],
    }),
    signalStarts: new Counter({
      name: 'external_signals_signal_starts_total',
      help: "Starts of accepted signals' workflows made after the answer, by result: started, or retried (Temporal away or overloaded)",
      labelNames: ['result'] as const,
      registers: [registry],
    }),
    pendingStarts: (count: () => number) =>
      new Gauge({
        name: 'external_signals_pending_starts',
        help: 'Accepted signals this ingress is still starting in Temporal (each is in Redis until it is started)',
        registers: [registry],
        collect() {
          this.set(count());
        },
      }),
    connectionsRefused: new Counter({
      name: 'external_signals_connections_refused_total',
      help: 'Connections closed at once because their client IP already held MAX_CONNECTIONS_PER_IP',
      registers: [registry],
    }),
    stopOuts: new Counter({
      name: 'external_signals_stop_outs_total',
      help: 'Stop-outs bridges carried out and the service recorded (each account and reset once)',
      registers: [registry],
    }),
    bridgesOnline: (count: () => number) =>
      new Gauge({
        name: 'external_signals_bridges_online',
        help: 'Accounts whose bridge polled this ingress within the last minute',
        registers: [registry],
        collect() {
          this.set(count());
        },
      }),
  };
}
export type IngressMetrics = ReturnType<typeof createIngressMetrics>;

export function createWorkerMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'external_signals_worker_' });
  return {
    registry,
    outcomes: new Counter({
      name: 'external_signals_outcomes_total',
      help: 'Account outcomes by outcome, reason code, action and platform',
      labelNames: ['outcome', 'reason', 'action', 'platform'] as const,
      registers: [registry],
    }),
    callbackAttempts: new Counter({
      name: 'external_signals_callback_attempts_total',
      help: 'Outcome callback delivery attempts by result: delivered (2xx), failed (retried), refused (not retried)',
      labelNames: ['result'] as const,
      registers: [registry],
    }),
  };
}
