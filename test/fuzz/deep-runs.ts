/** Imported first by deep-properties.test.ts: the property files read it as they load (test/helpers/property-runs.ts). */
process.env.PROPERTY_RUNS = 'deep';
