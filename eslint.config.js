import javascript from "@eslint/js";
import typescript from "typescript-eslint";

export default typescript.config(
  { ignores: ["dist/", "node_modules/", "test/fixtures/", "data/", "coverage/"] },
  javascript.configs.recommended,
  ...typescript.configs.recommended,
  {
    rules: {
      "@typescript-eslint/no-non-null-assertion": "error",
      "@typescript-eslint/no-explicit-any": "error",
      "@typescript-eslint/consistent-type-imports": "error",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      eqeqeq: ["error", "always"],
    },
  },
  {
    files: ["**/*.js", "**/*.mjs"],
    languageOptions: { globals: { process: "readonly", console: "readonly", AbortController: "readonly" } },
  },
);
