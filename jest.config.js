/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  testMatch: ['<rootDir>/test/**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/', '<rootDir>/dist/', '<rootDir>/.run/'],
  // Build output and run state are never tests, modules or watch triggers.
  modulePathIgnorePatterns: ['<rootDir>/dist/', '<rootDir>/.run/'],
  watchPathIgnorePatterns: ['<rootDir>/dist/', '<rootDir>/.run/'],
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
  // One Temporal dev server and one redis-server for the whole run (real ones, on free loopback ports).
  globalSetup: '<rootDir>/test/helpers/global-setup.ts',
  globalTeardown: '<rootDir>/test/helpers/global-teardown.ts',
  testTimeout: 60000,
  maxWorkers: 2,
};
