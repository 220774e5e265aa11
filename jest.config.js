/**
 * Two projects: `unit` (test/unit: pure code, no server: `npm run test:unit` runs it alone in seconds) and `service`
 * (everything else, against one real Temporal dev server and one real redis-server started by the global setup, on
 * free loopback ports). `make test` runs both. Jest runs a project's global setup only when one of its tests runs.
 */
const shared = {
  testEnvironment: 'node',
  testPathIgnorePatterns: ['/node_modules/', '<rootDir>/dist/', '<rootDir>/.run/'],
  // Build output and run state are never tests, modules or watch triggers.
  modulePathIgnorePatterns: ['<rootDir>/dist/', '<rootDir>/.run/'],
  transform: {
    '^.+\\.ts$': [
      '@swc/jest',
      {
        jsc: { parser: { syntax: 'typescript', decorators: false }, target: 'es2022' },
        module: { type: 'commonjs' },
      },
    ],
    // The dashboard's pure modules (ES modules the browser loads as they are) run under jest as CommonJS too.
    '^.+/dashboard/[^/]+\\.js$': ['@swc/jest', { jsc: { target: 'es2022' }, module: { type: 'commonjs' } }],
    // otplib's audited crypto and base32 (@noble/hashes, @scure/base) ship as ES modules only; Node loads them with
    // require(esm), jest's module system does not, so jest compiles them to CommonJS.
    '^.+/node_modules/@(noble|scure)/.+\\.js$': ['@swc/jest', { jsc: { target: 'es2022' }, module: { type: 'commonjs' } }],
  },
  transformIgnorePatterns: ['/node_modules/(?!@noble/|@scure/)'],
  moduleFileExtensions: ['ts', 'js', 'json', 'node'],
  // The dashboard's modules import each other with the release in the URL (`./trade-model.js?v=__VERSION__`).
  moduleNameMapper: { '^(\\./[^/]+\\.js)\\?v=__VERSION__$': '$1' },
};

/** @type {import('jest').Config} */
module.exports = {
  // A global option: jest ignores testTimeout inside a project, and every test and hook then had 5 s.
  testTimeout: 60000,
  watchPathIgnorePatterns: ['<rootDir>/dist/', '<rootDir>/.run/'],
  maxWorkers: 2,
  projects: [
    { ...shared, displayName: 'unit', testMatch: ['<rootDir>/test/unit/**/*.test.ts'] },
    {
      ...shared,
      displayName: 'service',
      testMatch: ['<rootDir>/test/**/*.test.ts'],
      testPathIgnorePatterns: [...shared.testPathIgnorePatterns, '<rootDir>/test/unit/'],
      // One Temporal dev server and one redis-server for the whole run (real ones, on free loopback ports).
      globalSetup: '<rootDir>/test/helpers/global-setup.ts',
      globalTeardown: '<rootDir>/test/helpers/global-teardown.ts',
    },
  ],
};
