# agentd in a container: docker build -t agentd . && docker run -p 7070:7070 -v agentd-data:/data agentd
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts
COPY tsconfig.json tsconfig.build.json tsconfig.web.json ./
# The build compiles src/, copies the dashboard's files and bundles the CLI (scripts/).
COPY scripts ./scripts
COPY src ./src
# `agentd run --help` leaves V8's compiled code of `agentd run` beside its bundle (the image's
# dist/ is read-only to the daemon's user, which could not write it at its first run).
RUN npm run build && node dist/cli/main.js run --help > /dev/null && npm prune --omit=dev

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
# Listen on every interface inside the container; runs, events and the vault go to the volume.
ENV NODE_ENV=production
RUN mkdir -p /data && chown node:node /data \
    && printf 'data_dir: /data\nserver:\n  host: 0.0.0.0\n  port: 7070\n' > /app/config.yaml
USER node
VOLUME ["/data"]
EXPOSE 7070
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
    CMD ["node", "-e", "fetch('http://127.0.0.1:7070/health').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
STOPSIGNAL SIGTERM
CMD ["node", "bin/agentd.js", "start", "--config", "/app/config.yaml"]
