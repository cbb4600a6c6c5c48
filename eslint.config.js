// typescript-eslint, type-aware and strict, over the TypeScript sources and tests; formatting is
// Prettier's (eslint-config-prettier turns off the rules that would fight it).
import js from '@eslint/js'
import prettier from 'eslint-config-prettier'
import tseslint from 'typescript-eslint'

export default tseslint.config(
  // lib/client/schema.ts is generated (npm run client:types, run by the build and lint), checked by tsc.
  { ignores: ['dist/**', 'node_modules/**', 'coverage/**', '.tap/**', 'lib/client/schema.ts'] },
  {
    files: ['**/*.ts'],
    extends: [js.configs.recommended, ...tseslint.configs.strictTypeChecked],
    languageOptions: {
      parserOptions: { project: './tsconfig.test.json', tsconfigRootDir: import.meta.dirname }
    },
    rules: {
      // Numbers and booleans read fine in messages; objects and nullish values are the mistakes.
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true, allowBoolean: true }],
      // A leading underscore marks a binding kept on purpose (a drained iterator, a skipped argument).
      '@typescript-eslint/no-unused-vars': ['error', { varsIgnorePattern: '^_', argsIgnorePattern: '^_', caughtErrors: 'none' }]
    }
  },
  {
    // A product file past 400 lines holds more than one job: split it by what its parts do. Every
    // line counts, comments and blank ones too. Tests and benches are exempt.
    files: ['{lib,workers,config,migrations}/**/*.{ts,js,mjs}'],
    rules: { 'max-lines': ['error', { max: 400, skipBlankLines: false, skipComments: false }] }
  },
  {
    // Knex hands back untyped rows; the store turns each into a typed row at its edge (toSiteRow,
    // toDate, Number(...)), so reading a column of a raw row is what the store is for.
    files: ['lib/store/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off'
    }
  },
  {
    // tap awaits its own subtests; a JSON answer parsed in a test is `any` by design, and the
    // assertions on it are the type check.
    files: ['test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-floating-promises': [
        'error',
        {
          allowForKnownSafePromises: [{ from: 'package', package: '@tapjs/core', name: 'PromiseWithSubtest' }]
        }
      ],
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/require-await': 'off',
      // Stand-ins and fixtures are loosely typed on purpose, and an assertion that a value exists is
      // what a `!` after a test's own lookup stands for (a wrong guess fails the test anyway).
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off'
    }
  },
  {
    files: ['bench/**/*.mjs', 'test/**/*.mjs', 'eslint.config.js'],
    extends: [js.configs.recommended],
    rules: { 'no-unused-vars': ['error', { varsIgnorePattern: '^_', argsIgnorePattern: '^_', caughtErrors: 'none' }] },
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        performance: 'readonly',
        fetch: 'readonly',
        URL: 'readonly',
        Buffer: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        setImmediate: 'readonly',
        AbortSignal: 'readonly',
        AbortController: 'readonly',
        TextEncoder: 'readonly',
        TextDecoder: 'readonly',
        structuredClone: 'readonly',
        queueMicrotask: 'readonly'
      }
    }
  },
  prettier
)
