# syntax=docker/dockerfile:1
# invoice-relay: one image for every command (start, run, worker, ingest, status, retry, results, simulate).
#   docker build -t invoice-relay .
#   docker run --rm invoice-relay --help

ARG NODE_IMAGE=node:20-bookworm-slim

# --- build: compile TypeScript to dist/ ---------------------------------------------------------------
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
# Scripts are skipped here because `prepare` builds, and the sources are not copied yet.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY workers ./workers
COPY bench ./bench
RUN npm run build

# --- runtime: production dependencies and the compiled code only ------------------------------------
FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production \
    DROP_DIR=/data/drop \
    npm_config_update_notifier=false
WORKDIR /app
COPY package.json package-lock.json ./
# --ignore-scripts: `prepare` would run `npm run build`, and TypeScript is a dev dependency.
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist/src ./dist/src
COPY --from=build /app/dist/workers ./dist/workers
COPY samples ./samples
RUN mkdir -p /data/drop && chown node:node /data/drop
USER node
ENTRYPOINT ["node", "dist/workers/cli.js"]
CMD ["start"]
