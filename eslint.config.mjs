// ESLint with typescript-eslint's strict type-checked rules over everything we write (src, workflows, activities,
// scripts, bench, test); `make lint` runs it and Prettier's check, and CI runs `make lint` before the tests.
// Where a rule is relaxed, the reason is beside it (docs/decisions.md, "Lint").
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

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
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_', caughtErrors: 'none' }],
      // Its reports here were mostly false: TypeScript's narrowing does not survive an await, so `this.closed` or
      // `signal.aborted` checked again after one is "always falsy" to it; and data from the network or Redis is
      // checked at run time even where a cast has given it a type.
      '@typescript-eslint/no-unnecessary-condition': 'off',
      // A method is async because its interface returns a promise, whether or not this implementation awaits.
      '@typescript-eslint/require-await': 'off',
    },
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
