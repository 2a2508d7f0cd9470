// Lint: typescript-eslint's type-aware recommended rules. no-floating-promises matters
// most here: this code is full of background loops and fire-and-forget notices.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/', 'scratch/', '.switchboard/', 'dist/', '.tools/'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        projectService: {
          allowDefaultProject: [
            '*.js',
            'bin/*.js',
            'scripts/*.mjs',
            'src/board/static/*.js',
            'test/cli/fixtures/*.mjs',
          ],
          // The files above are few and small; the default limit of 8 is a guard against globs
          // that match a whole source tree.
          maximumDefaultProjectFileMatchCount_THIS_WILL_SLOW_DOWN_LINTING: 16,
        },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': [
        'error',
        { allowForKnownSafeCalls: [{ from: 'package', name: ['test', 'describe', 'it'], package: 'node:test' }] },
      ],
      '@typescript-eslint/no-misused-promises': 'error',
      // Async functions without await are common in route handlers and sweep stubs.
      '@typescript-eslint/require-await': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    // Tests poke at untyped JSON and error objects on purpose.
    files: ['test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-base-to-string': 'off',
    },
  },
  {
    files: ['**/*.js', '**/*.mjs'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly' } },
  },
  {
    // The board's one browser script.
    files: ['src/board/static/*.js', 'test/cli/fixtures/*.mjs'],
    languageOptions: {
      globals: {
        document: 'readonly',
        htmx: 'readonly',
        EventSource: 'readonly',
        WebSocket: 'readonly',
        fetch: 'readonly',
        location: 'readonly',
        navigator: 'readonly',
        setTimeout: 'readonly',
      },
    },
  },
);
