// Lint: the type-aware rules of typescript-eslint that catch what the compiler does not (a
// promise nobody awaits, a type imported as a value), and a size bound that keeps modules to one job.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      'dist/',
      'node_modules/',
      'coverage/',
      'bench/',
      'bin/',
      'fixtures/',
      'schema/',
      'scripts/',
      'test/**/*.mjs',
      'eslint.config.js',
      'vitest.config.ts',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      parserOptions: { project: ['./tsconfig.test.json'], tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      // `typeof import('x')` stays allowed: it types a module loaded on first use without loading it.
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports', disallowTypeAnnotations: false }],
      // Control characters are what several checks look for (header values, printable messages).
      'no-control-regex': 'off',
      // A peer's handler is made before the peer it calls: `let peer!: Peer` is assigned once, after.
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
    },
  },
  {
    files: ['src/**/*.ts'],
    rules: {
      'max-lines': ['error', { max: 450, skipBlankLines: true, skipComments: true }],
    },
  },
);
