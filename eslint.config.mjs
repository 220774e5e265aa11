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
    },
  },
  {
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: {
      // Tests read JSON bodies of the service's answers as `any` on purpose: the assertion is the type check.
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-explicit-any': 'off',
    },
  },
);
