# agentd in a container. Build: docker build -t agentd .
# Run (compose.yaml has the same settings; docs/deployment.md says why each flag is there):
#   docker run -d --name agentd -p 127.0.0.1:7070:7070 \
#     -v agentd-data:/data -v agentd-workspaces:/app/.agentd \
#     --security-opt seccomp=unconfined --security-opt apparmor=unconfined \
#     --security-opt systempaths=unconfined --security-opt no-new-privileges \
#     --cap-drop ALL --init agentd
# Without the three "unconfined" options bubblewrap cannot make its sandbox, and every shell, CLI
# and MCP call fails with SANDBOX_UNAVAILABLE (the health check says so).
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts
COPY tsconfig.json tsconfig.build.json tsconfig.web.json ./
# The build compiles src/, copies the dashboard's files and bundles the CLI (scripts/).
COPY scripts ./scripts
COPY src ./src
# `--help` of `run`, of `start` and of the other commands leaves V8's compiled code beside each
# bundle (the image's dist/ is read-only to the daemon's user, which could not write it at its
# first run).
RUN npm run build && node dist/cli/main.js run --help > /dev/null \
  && node dist/cli/main.js start --help > /dev/null && node dist/cli/main.js --help > /dev/null \
  && npm prune --omit=dev

FROM node:20-bookworm-slim
# bubblewrap: the sandbox of shell commands, CLI workers and stdio MCP servers.
RUN apt-get update \
    && apt-get install -y --no-install-recommends bubblewrap ca-certificates git \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json config.example.yaml ./
COPY bin ./bin
COPY agents ./agents
COPY presets ./presets
COPY docs ./docs
COPY vendor ./vendor
# Listen on every interface inside the container; runs, events and the vault go to /data. Agents
# without a workdir work in /app/.agentd/workspaces (the project is /app, which holds agents/):
# the node user must be able to write there, and a volume keeps that work across containers.
# `agentd` on PATH: `docker exec agentd agentd run <agent>` finds the daemon through
# /app/config.yaml (its data_dir's lock and token file) and sends the run to it.
ENV NODE_ENV=production
RUN mkdir -p /data /app/.agentd && chown node:node /data /app/.agentd \
    && printf 'data_dir: /data\nserver:\n  host: 0.0.0.0\n  port: 7070\n' > /app/config.yaml \
    && ln -s /app/bin/agentd.js /usr/local/bin/agentd
USER node
VOLUME ["/data", "/app/.agentd"]
EXPOSE 7070
# Healthy when /health answers ok and a shell call runs in the sandbox, in the default workspaces.
HEALTHCHECK --interval=30s --timeout=20s --start-period=30s --retries=3 \
    CMD ["node", "/app/bin/agentd.js", "health", "--config", "/app/config.yaml"]
STOPSIGNAL SIGTERM
CMD ["node", "bin/agentd.js", "start", "--config", "/app/config.yaml"]
