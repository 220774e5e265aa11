/**
 * The infrastructure the bench shares with the tests (support/: Temporal, Redis, PostgreSQL and the service's
 * processes on free loopback ports), compiled with the bench; no source hook, the same types as the tests see.
 */
import * as infra from '../support/infra';
import * as processes from '../support/processes';
import * as cluster from '../support/temporal-cluster';

export { REPO_ROOT, type RedisServer, type TemporalServer } from '../support/infra';
export type { IngressProcess, PaperBridgeProcess, ServiceProcess } from '../support/processes';
export type { TemporalCluster } from '../support/temporal-cluster';

export type InfraModule = typeof infra;
export type ProcessesModule = typeof processes;
export type ClusterModule = typeof cluster;

/** The modules, as the bench's stages take them (a stage can be handed other ones in a test). */
export function loadHelpers(): { infra: InfraModule; processes: ProcessesModule; cluster: ClusterModule } {
  return { infra, processes, cluster };
}
