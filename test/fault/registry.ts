/**
 * The fault suite's registries: a document of fresh accounts of one owner, written under the scenario's own directory
 * and imported with the built admin CLI, and the whole stack on a Temporal server of the scenario's own.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { ownerDocument } from '../helpers/registry';
import { startTemporal, type TemporalServer } from '../../support/infra';
import { ensureBuilt, processLogDir, runAdminProcess, serviceEnv, startProcessStack, type ProcessStack } from '../../support/processes';

interface FaultAccount {
  id: string;
  platform: 'mt5' | 'ctrader';
  bridgeToken: string;
}

export interface FaultRegistry {
  tag: string;
  owner: string;
  secret: string;
  token: string;
  accounts: FaultAccount[];
  /** The admin import document (credentials in plain text: kept under the run dir, mode 0600). */
  doc: Record<string, unknown>;
}

/**
 * `count` fresh accounts of one owner (alternating mt5 / ctrader, unless `platform`), one secret linking all, one
 * poll token for all. Market entries may be executed up to `maxSignalAgeMs` after acceptance (default 10 minutes, so
 * that a burst that takes a loaded machine a minute tests delivery, not the staleness guard); 'service-default' leaves
 * the account without its own setting (COMMAND_AGES.marketEntryMs in src/domain/limits.ts, 30 s).
 */
export function makeRegistry(
  label: string,
  count: number,
  opts: { platform?: 'mt5' | 'ctrader'; maxSignalAgeMs?: number | 'service-default' } = {},
): FaultRegistry {
  const tag = `${label}-${randomBytes(4).toString('hex')}`;
  const owner = `fault-owner-${tag}`;
  const built = ownerDocument(
    owner,
    Array.from({ length: count }, (_, i) => ({
      id: `f-${tag}-${i}`,
      platform: opts.platform ?? (i % 2 === 0 ? 'mt5' : 'ctrader'),
      ...(opts.maxSignalAgeMs === 'service-default' ? {} : { risk: { maxSignalAgeMs: opts.maxSignalAgeMs ?? 600_000 } }),
    })),
  );
  return { tag, ...built, doc: built.doc as unknown as Record<string, unknown> };
}

/** A directory of this scenario's own under the run's process log dir. */
export function scenarioDir(tag: string): string {
  const dir = path.join(processLogDir(), `fault-${tag}`);
  fs.mkdirSync(dir, { recursive: true });
  return dir;
}

/** Writes a registry document (or the part of it with only `accountIds`, for a bridge of its own) and returns its path. */
export function writeRegistryFile(dir: string, name: string, reg: FaultRegistry, accountIds?: string[]): string {
  const file = path.join(dir, name);
  const doc = accountIds ? { accounts: (reg.doc.accounts as { id: string }[]).filter((a) => accountIds.includes(a.id)) } : reg.doc;
  fs.writeFileSync(file, JSON.stringify(doc, null, 2), { mode: 0o600 });
  return file;
}

/** A scenario's files: its directory, the paper bridge's ledger there, and its registry document written there. */
export function scenarioFiles(reg: FaultRegistry): { dir: string; ledgerFile: string; registryFile: string } {
  const dir = scenarioDir(reg.tag);
  return { dir, ledgerFile: path.join(dir, 'ledger.jsonl'), registryFile: writeRegistryFile(dir, 'registry.json', reg) };
}

/** `admin import FILE --json` into the Redis of `env`; throws unless it imported every record. */
export async function importRegistry(file: string, env: Record<string, string>): Promise<void> {
  const doc = JSON.parse(fs.readFileSync(file, 'utf8')) as { accounts?: unknown[]; secrets?: unknown[]; tokens?: unknown[] };
  const run = await runAdminProcess(['import', file, '--json'], env);
  if (run.code !== 0) throw new Error(`admin import exited ${run.code}: ${run.stderr}`);
  expect(JSON.parse(run.stdout)).toEqual({ accounts: doc.accounts?.length ?? 0, secrets: doc.secrets?.length ?? 0, tokens: doc.tokens?.length ?? 0 });
}

/**
 * The whole stack (worker, ingress, paper bridge) on a Temporal dev server of the scenario's own, which the scenario
 * may stop; the run's shared Redis. `env` is added to the service's environment.
 */
export async function stackOnOwnTemporal(
  reg: FaultRegistry,
  env: Record<string, string> = {},
): Promise<{ temporal: TemporalServer; stack: ProcessStack; ledgerFile: string }> {
  ensureBuilt();
  const { ledgerFile, registryFile } = scenarioFiles(reg);
  const temporal = await startTemporal();
  try {
    await importRegistry(registryFile, serviceEnv());
    const stack = await startProcessStack({ registryFile, ledgerFile, env: { TEMPORAL_ADDRESS: temporal.address, TEMPORAL_NAMESPACE: 'default', ...env } });
    return { temporal, stack, ledgerFile };
  } catch (err) {
    await temporal.stop();
    throw err;
  }
}
