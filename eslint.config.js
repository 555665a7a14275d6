// ESLint: typescript-eslint's type-checked rules over the TypeScript of src/, test/ and sdk/, and
// ESLint's own recommended rules over the JavaScript of bench/ and bin/. The rules that matter most
// in money code are the promise rules (a promise nobody awaits is a write nobody waits for) and the
// exhaustive switch over a status list. Formatting is Prettier's (npm run format).
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/', 'dist/', 'sdk/dist/', 'coverage/', '.tmp/', 'data/'] },
  {
    files: ['**/*.ts'],
    extends: [js.configs.recommended, ...tseslint.configs.recommendedTypeChecked],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
      // An `async` function without an `await` still turns a throw into a rejection, which the
      // ports' callers rely on (a connector's call is never a synchronous throw).
      '@typescript-eslint/require-await': 'off',
      // tsc's noFallthroughCasesInSwitch checks this with the types: it knows `fail()` returns never.
      'no-fallthrough': 'off',
      // A caught value is passed on as it was caught.
      '@typescript-eslint/prefer-promise-reject-errors': ['error', { allowThrowingUnknown: true }],
      // `_name` is how a deliberately unused binding is written (a destructured field left out).
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' },
      ],
    },
  },
  {
    // A migration is frozen at the day it was written, so it reads the schema of that day, not the
    // current types: Kysely's documentation types it `Kysely<any>`.
    files: ['src/store/migrations.ts', 'src/store/migrations/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off', '@typescript-eslint/no-unsafe-argument': 'off' },
  },
  {
    // Tests read the JSON answers of a real server: `any` is what an answer is until a check says
    // otherwise, so the rules about `any` stay for the gateway's code only. The promise rules stay.
    files: ['test/**/*.ts', '**/*.test.ts', 'sdk/test-support/**/*.ts'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
    },
  },
  {
    // The hosted page's own script, run by the customer's browser.
    files: ['src/pages/assets/*.js'],
    languageOptions: { globals: { ...globals.browser } },
  },
  {
    files: ['**/*.{js,mjs}'],
    extends: [js.configs.recommended],
    languageOptions: { globals: { ...globals.node } },
    ignores: ['src/pages/assets/*.js'],
    rules: { 'no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }] },
  },
);
