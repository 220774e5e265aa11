import { GLOBAL_INFRA_KEY, type GlobalInfra } from './global-setup';

/** Stops what global-setup.ts started, whatever the tests did. */
export default async function globalTeardown(): Promise<void> {
  const infra = (globalThis as Record<string, unknown>)[GLOBAL_INFRA_KEY] as GlobalInfra | undefined;
  if (!infra) return;
  const results = await Promise.allSettled([infra.temporal?.dispose ? infra.temporal.dispose() : infra.temporal?.stop(), infra.redis?.stop()]);
  delete (globalThis as Record<string, unknown>)[GLOBAL_INFRA_KEY];
  const failures = results.flatMap((r) => (r.status === 'rejected' ? [String((r.reason as Error)?.stack ?? r.reason)] : []));
  if (failures.length > 0) throw new Error(`test infrastructure did not stop cleanly:\n${failures.join('\n')}`);
}
