// ESLint flat config: typescript-eslint's recommended rules plus explicit types on functions.
import eslint from '@eslint/js';
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';

export default defineConfig(
    { ignores: ['dist/', 'out/', 'node_modules/', 'e2e/', '*.mjs'] },
    {
        files: ['src/**/*.ts'],
        extends: [eslint.configs.recommended, tseslint.configs.recommended],
        rules: {
            '@typescript-eslint/explicit-function-return-type': ['error', { allowExpressions: true, allowTypedFunctionExpressions: true }],
            '@typescript-eslint/no-explicit-any': 'error',
            '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
            eqeqeq: 'error',
            curly: 'error',
        },
    },
);
