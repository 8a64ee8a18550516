import javascript from "@eslint/js";
import typescript from "typescript-eslint";

export default typescript.config(
  {
    ignores: [
      "dist/",
      "node_modules/",
      "test/fixtures/",
      "data/",
      "coverage/",
      "**/.agentd/",
      "test-artefacts/",
    ],
  },
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
    // Type-aware: a promise nobody awaits loses its rejection. Only this rule reads types, and only
    // for the TypeScript the type-check covers (the dashboard's web code has its own tsconfig).
    files: ["**/*.ts"],
    ignores: ["src/dashboard/web/**"],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: { "@typescript-eslint/no-floating-promises": "error" },
  },
  {
    // A LazySandboxPolicy's lists are getters of its class: a spread copies none of them, and a
    // copy whose `unmade` or `systemRead` reads as empty would let the file tools make what a hook
    // runs. `policyWith` makes a changed copy.
    files: ["src/**/*.ts"],
    ignores: ["src/sandbox/lazy-sandbox-policy.ts"],
    rules: {
      "no-restricted-syntax": [
        "error",
        {
          selector:
            "ObjectExpression > SpreadElement:matches([argument.name=/[pP]olicy$/], [argument.property.name=/[pP]olicy$/])",
          message:
            "a spread drops a LazySandboxPolicy's lazy lists: use policyWith (src/sandbox/lazy-sandbox-policy.ts)",
        },
      ],
    },
  },
  {
    files: ["**/*.js", "**/*.mjs"],
    languageOptions: { globals: { process: "readonly", console: "readonly", AbortController: "readonly" } },
  },
  {
    // dependency-cruiser reads its config as CommonJS.
    files: [".dependency-cruiser.cjs"],
    languageOptions: { sourceType: "commonjs", globals: { module: "writable" } },
  },
  {
    // The bin is CommonJS (bin/package.json), so `agentd run` starts without the ES module loader.
    files: ["bin/**/*.js"],
    languageOptions: { sourceType: "commonjs", globals: { require: "readonly", __dirname: "readonly" } },
    rules: { "@typescript-eslint/no-require-imports": "off" },
  },
);
