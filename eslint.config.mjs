// Lint for what the compiler cannot see: a promise nobody awaits. The store's calls are async, and
// an unawaited write or check (an access check, a transaction) fails silently or out of order.
// Type-aware rules only; formatting and style are left to review.
import tseslint from 'typescript-eslint';

export default tseslint.config({
  // Not test/: tap's top-level t.test() calls are promises by design.
  files: ['src/**/*.ts', 'src/**/*.tsx', 'daemon/**/*.ts', 'bench/**/*.ts'],
  languageOptions: {
    parser: tseslint.parser,
    parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
  },
  plugins: { '@typescript-eslint': tseslint.plugin },
  rules: {
    '@typescript-eslint/no-floating-promises': 'error',
    '@typescript-eslint/await-thenable': 'error',
    '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: false }],
  },
});
