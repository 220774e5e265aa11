/**
 * What jest's globalSetup started for this run, as test files see it. globalSetup sets these in process.env before
 * the test workers start, and jest hands its environment to every worker (checked by test/integration/infra.test.ts).
 */
export interface TestEnv {
  /** gRPC address of the run's Temporal dev server, `127.0.0.1:PORT`. */
  temporalAddress: string;
  /** `default`. */
  temporalNamespace: string;
  /** A second namespace on the same server, standing in for a second execution region. */
  temporalNamespaceB: string;
  /** `redis://127.0.0.1:PORT` of the run's redis-server. */
  redisUrl: string;
  /** Absolute path of the Temporal CLI. */
  temporalBin: string;
  /** SQLite file of the run's Temporal server. */
  temporalDb: string;
  /** Where this run writes logs and files (`.run/test/<pid>-<time>`). */
  runDir: string;
}

function required(name: string): string {
  const value = process.env[name];
  if (!value) {
    throw new Error(`${name} is not set: run the tests through jest (jest.config.js globalSetup starts Temporal and Redis)`);
  }
  return value;
}

export function testEnv(): TestEnv {
  return {
    temporalAddress: required('TEMPORAL_ADDRESS'),
    temporalNamespace: required('TEMPORAL_NAMESPACE'),
    temporalNamespaceB: required('TEST_TEMPORAL_NAMESPACE_B'),
    redisUrl: required('REDIS_URL'),
    temporalBin: required('TEMPORAL_BIN'),
    temporalDb: required('TEST_TEMPORAL_DB'),
    runDir: required('TEST_RUN_DIR'),
  };
}
