// ESLint with typescript-eslint's strict type-checked rules over everything we write (src, workflows, activities,
// scripts, bench, test); `make lint` runs it and Prettier's check, and CI runs `make lint` before the tests.
// Where a rule is relaxed, the reason is beside it (docs/decisions.md, "Lint").
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** The workflow types and messages Temporal records by name (workflows/*.ts). */
const NAMES = [
  'signalWorkflow',
  'accountWorkflow',
  'callbackWorkflow',
  'idempotencyWindowWorkflow',
  'bridgeReportUpdate',
  'bridgeReport',
  'withdrawCommand',
  'recordOperatorOutcome',
];
const WORKFLOW_NAMES = `/^(${NAMES.join('|')})$/`;
const WORKFLOW_NAMES_INSIDE = `/(${NAMES.slice(0, 4).join('|')})/`;

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', '.run/**', 'coverage/**', 'bridges/**', 'demo/**', 'docs/**', '**/*.js', '**/*.mjs', '**/*.cjs'] },
  js.configs.recommended,
  ...tseslint.configs.strictTypeChecked,
  {
    languageOptions: {
      // tsconfig.test.json covers the tests too (tsconfig.json builds only what ships).
      parserOptions: { project: ['./tsconfig.test.json'], tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      // Numbers and booleans in messages and keys are what they look like.
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true, allowBoolean: true }],
      // With noUncheckedIndexedAccess, `xs[i]!` after a bounds check is the codebase's one idiom for "present".
      '@typescript-eslint/no-non-null-assertion': 'off',
      // `() => void f()` and `(x) => set.add(x)` arrow shorthands are clear enough.
      '@typescript-eslint/no-confusing-void-expression': ['error', { ignoreArrowShorthand: true, ignoreVoidOperator: true }],
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_', caughtErrors: 'none' },
      ],
      // Its reports here were mostly false: TypeScript's narrowing does not survive an await, so `this.closed` or
      // `signal.aborted` checked again after one is "always falsy" to it; and data from the network or Redis is
      // checked at run time even where a cast has given it a type.
      '@typescript-eslint/no-unnecessary-condition': 'off',
      // A method is async because its interface returns a promise, whether or not this implementation awaits.
      '@typescript-eslint/require-await': 'off',
    },
  },
  {
    // A workflow type or message is named once, where it is defined (workflows/messages.ts, the workflow functions):
    // everywhere else it is used typed (`start(signalWorkflow, …)`, `executeUpdate(bridgeReportUpdate, …)`) or by its
    // definition's name (`signalWorkflow.name`), so renaming one or changing its arguments breaks the build.
    files: ['src/**/*.ts', 'workflows/**/*.ts', 'activities/**/*.ts', 'bench/**/*.ts', 'scripts/**/*.ts', 'support/**/*.ts'],
    ignores: ['workflows/messages.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: `Literal[value=${WORKFLOW_NAMES}]`,
          message: 'A workflow or workflow message named by a string: use its definition (workflows/messages.ts, the workflow function, or its .name).',
        },
        {
          selector: `TemplateElement[value.raw=${WORKFLOW_NAMES_INSIDE}]`,
          message: "A workflow named inside a string: interpolate its definition's .name.",
        },
      ],
    },
  },
  {
    // The two sides of the bridge wire (docs/architecture.md): src/bridge is the service's bridge API (queue, gateway,
    // reports); src/bridge-kit is what bridges run (client loop, command log, stop-out watch, trade management). The
    // bridges (src/paper, src/ctrader's connector) build on the kit and the domain; neither side imports the other.
    files: ['src/bridge-kit/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/bridge/*', '**/http/*', '**/signals/*', '**/temporal/*', '**/registry/*', '**/owners/*', '**/trades/*', '**/callbacks/*'],
              message: 'src/bridge-kit runs in the bridges: it imports only the domain and itself.',
            },
            { group: ['@temporalio/*', 'ioredis', 'express'], message: 'src/bridge-kit runs in the bridges: no Temporal, Redis or HTTP server there.' },
          ],
        },
      ],
    },
  },
  {
    files: ['src/**/*.ts', 'workflows/**/*.ts', 'activities/**/*.ts'],
    ignores: ['src/bridge-kit/**', 'src/paper/**', 'src/ctrader/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ group: ['**/bridge-kit/*'], message: 'The service does not import what bridges run (src/bridge-kit).' }] },
      ],
    },
  },
  {
    // A file a reader can hold: split by meaning past this (docs/architecture.md, "House rules").
    files: ['**/*.ts'],
    rules: { 'max-lines': ['error', { max: 400 }] },
  },
  {
    files: ['test/**/*.ts', 'support/**/*.ts', 'bench/**/*.ts'],
    rules: {
      // Tests read JSON bodies of the service's answers as `any` on purpose: the assertion is the type check.
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-explicit-any': 'off',
      // A test checks at run time what the types promise (that is what it is for), and its scripted doubles implement
      // async interfaces without awaiting anything.
      '@typescript-eslint/no-unnecessary-type-conversion': 'off',
      '@typescript-eslint/no-confusing-void-expression': 'off',
      '@typescript-eslint/no-meaningless-void-operator': 'off',
      '@typescript-eslint/use-unknown-in-catch-callback-variable': 'off',
      'preserve-caught-error': 'off',
      // Doubles of framework objects (`{} as Request`), fields deleted to build bad input, the raw search attribute
      // map an operator sees, and values printed into failure messages are what these tests are made of.
      '@typescript-eslint/no-unsafe-class-instance-assignment': 'off',
      '@typescript-eslint/no-dynamic-delete': 'off',
      '@typescript-eslint/no-deprecated': 'off',
      '@typescript-eslint/no-base-to-string': 'off',
      // Its view of `let last; for (…) last = …` disagrees with tsc's (it would drop the `last!` tsc requires).
      '@typescript-eslint/no-unnecessary-type-assertion': 'off',
      // The integration-doc test compiles the n8n Code node's JavaScript to run it, as n8n does.
      '@typescript-eslint/no-implied-eval': 'off',
    },
  },
);
