/**
 * How many cases a property test draws. The unit loop runs a tenth of each property's deep count (at least 25), so
 * it stays a loop of seconds; `PROPERTY_RUNS=deep` (test/fuzz/deep-properties.test.ts sets it, in the service
 * project that `make test` runs) runs every property at its deep count.
 * The seeds stay fixed either way: a failure found at either depth replays as it was found.
 */
const DEEP = process.env.PROPERTY_RUNS === 'deep';
export const propertyRuns = (deep: number): number => (DEEP ? deep : Math.max(25, Math.round(deep / 10)));
