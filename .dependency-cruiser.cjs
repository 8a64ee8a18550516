// The layers of src/, checked by `npm run layers` (part of `npm test`). LAYERS lists every folder of
// src/ from the bottom up: a folder imports only folders listed before it, never one after it. So
// no two folders can import each other (no folder cycle) except through a type-only import up the
// layers, and those are allowed only where TYPE_ONLY_EXCEPTIONS lists them, each with its reason.

/** Bottom to top; a folder may import the folders above it in this list. */
const LAYERS = [
  // Words and tools every folder may use.
  "errors",
  "util",
  "logging",
  "schema",
  "clock",
  // A run's statuses, reasons, usage, outcome, record, control and abort endings.
  "run-vocabulary",
  // What a user writes: config.yaml and the settings sections agent frontmatter shares with it.
  "config",
  "events",
  // Who may do what: roles, named tokens, the audit trail.
  "access",
  // Parts a run is made of.
  "secrets",
  "permissions",
  "locks",
  "llm",
  // OpenTelemetry traces: the run tracer, and the trace context tools, hooks and workers pass on.
  "telemetry",
  "checkpoints",
  "retention",
  "vault",
  "sandbox",
  "processes",
  "approvals",
  "tools",
  "questions",
  "mcp",
  "workers",
  "scheduler",
  "hooks",
  // Webhooks, other agents' run ends and watched folders that start runs (frontmatter `triggers:`).
  "triggers",
  // Memory across runs: its settings join the agent schema; its tools and prompt sections run on the parts above.
  "memory",
  // Agents as the files define them.
  "presets",
  "prompt",
  "definitions",
  // Runs: queued, launched, resumed, taken over; then the stores that keep them.
  "runs",
  "subagents",
  "store",
  // Runs' outcomes sent out to their targets (webhooks, chats, email, files).
  "deliveries",
  // Ways in, and the composition root.
  "dashboard",
  "api",
  "app",
  "cli",
];

/** Type-only imports up the layers that are allowed, each with its reason. Nothing else is. */
const TYPE_ONLY_EXCEPTIONS = [
  {
    from: ["sandbox", "tools", "workers", "scheduler", "hooks", "triggers", "memory"],
    to: "^src/definitions/agent-(definition|schema)[.]ts$",
    why: "an agent's definition is built at the top from every feature's settings; the features it configures read it as a type",
  },
  {
    from: ["dashboard"],
    to: "^src/api/response-schemas[.]ts$",
    why: "the web page reads the API's answers: it names their types, erased by the build, so the two cannot drift",
  },
];

const folders = LAYERS;
const layerOf = (folder) => LAYERS.indexOf(folder);
const anyOf = (names) => `^src/(${names.join("|")})/`;

const backUpRules = folders.flatMap((folder) => {
  const above = folders.filter((other) => layerOf(other) > layerOf(folder));
  if (above.length === 0) return [];
  const excepted = TYPE_ONLY_EXCEPTIONS.filter((exception) => exception.from.includes(folder));
  return [
    {
      name: `back-up-import-from-${folder}`,
      comment: `src/${folder} imports a folder listed after it in LAYERS`,
      severity: "error",
      from: { path: `^src/${folder}/` },
      to: {
        path: anyOf(above),
        ...(excepted.length > 0 ? { pathNot: excepted.map((exception) => exception.to) } : {}),
      },
    },
  ];
});

const exceptionRules = TYPE_ONLY_EXCEPTIONS.map((exception, index) => ({
  name: `type-only-exception-${index + 1}-at-run-time`,
  comment: `allowed as a type-only import only: ${exception.why}`,
  severity: "error",
  from: { path: anyOf(exception.from) },
  to: { path: exception.to, dependencyTypesNot: ["type-only"] },
}));

/** @type {import("dependency-cruiser").IConfiguration} */
module.exports = {
  forbidden: [
    ...backUpRules,
    ...exceptionRules,
    {
      name: "folder-in-no-layer",
      comment: "a folder of src/ that LAYERS does not place: add it to the layer it belongs to",
      severity: "error",
      from: { path: "^src/", pathNot: anyOf(folders) },
      to: {},
    },
    {
      name: "web-page-imports-types-only",
      comment: "the dashboard's page runs in a browser: from the rest of src/ it may take types only",
      severity: "error",
      from: { path: "^src/dashboard/web/" },
      to: { path: "^src/", pathNot: "^src/dashboard/web/", dependencyTypesNot: ["type-only"] },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    includeOnly: "^src/",
    // Type-only imports are kept (they are erased from the JavaScript), so they can be checked too.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: { extensions: [".ts", ".tsx", ".js"] },
  },
};
