// Type-aware lint. Two rules carry the project's invariants:
// - no-floating-promises: an un-awaited promise in an activity or the load generator is a lost error
//   (or a lost measurement);
// - no Node built-ins inside workflows/: workflow code must be deterministic, so it reaches the world
//   only through activities (Temporal's bundler would reject most of these anyway, later and less clearly).
import tseslint from 'typescript-eslint';
import { builtinModules } from 'node:module';

const nodeBuiltins = [...builtinModules, ...builtinModules.map((m) => `node:${m}`)];

export default tseslint.config(
  { ignores: ['node_modules/', 'dist/', 'state/', '.venv/', 'coverage/', '**/*.cjs', '**/*.mjs', 'lib/evidence/vendor/'] },
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': [
        'error',
        // node:test's test()/describe() return promises the runner itself awaits.
        { allowForKnownSafeCalls: [{ from: 'package', package: 'node:test', name: ['test', 'it', 'describe', 'suite'] }] },
      ],
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: false }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    files: ['workflows/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { paths: nodeBuiltins.map((name) => ({ name, message: 'Workflows are deterministic: do I/O in an activity.' })) }],
      'no-restricted-globals': ['error', { name: 'setTimeout', message: 'Use sleep() from @temporalio/workflow.' }, { name: 'process', message: 'Workflows read no environment: pass it in the spec.' }],
    },
  },
);
