/**
 * Real infrastructure for integration and e2e tests, the bench and `make cluster`: a Temporal CLI dev server and a
 * redis-server, each on free loopback ports, each in its own process group. Used by jest's globalSetup (one of each
 * for the whole run) and by tests that need a private instance they can stop and start (outage and restart
 * scenarios). One import for the three parts.
 */
export * from './run';
export * from './temporal-dev';
export * from './redis-server';
