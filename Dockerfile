# syntax=docker/dockerfile:1
#
# Sibyl: one image, every role. `sibyl serve` (the default command), `sibyl work` and `sibyl start`
# run the service; every other CLI command runs the same way (`docker compose run --rm api sibyl
# accounts create …`). docs/operations.md#deployment has the recipe and says what was run.

ARG NODE_IMAGE=node:20-bookworm-slim

# ---- build: every dependency, then tsc -> dist/ (the server and the client)
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
COPY client/package.json client/
# Scripts off: `prepare` would build before the sources are here.
RUN npm ci --no-audit --no-fund --ignore-scripts
COPY . .
RUN npm run build

# ---- runtime: production dependencies, the compiled code, nothing else
FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    SIBYL_DATA_DIR=/app/data
WORKDIR /app
COPY package.json package-lock.json ./
# Only the server's own dependencies: not the client workspace, no dev tools, no lifecycle
# scripts (`prepare` builds, and dist/ comes from the build stage).
RUN npm ci --omit=dev --ignore-scripts --workspaces=false --include-workspace-root --no-audit --no-fund \
  && npm cache clean --force
COPY --from=build /app/dist dist
COPY bin bin
# The guides are served beside the API reference (/docs/guides/…).
COPY docs docs
RUN ln -s /app/bin/sibyl.js /usr/local/bin/sibyl \
  && mkdir -p /app/data && chown node:node /app/data
USER node
EXPOSE 3000
# Liveness of the API (`serve`, `start`). A `work` process has no API port: compose.yaml checks its
# metrics listener instead.
HEALTHCHECK --interval=15s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
CMD ["sibyl", "serve"]
