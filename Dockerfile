# syntax=docker/dockerfile:1
# intake-sync: the sync worker image. Requires explicit INTAKE_API_BASE_URL (+ key, secret)
# and DATABASE_URL: INTAKE_SYNC_REQUIRE_EXPLICIT_CONFIG=1 refuses embedded PGlite and `run --demo`.
# It can only tighten (0 is refused): without a base URL `run` refuses anyway when DATABASE_URL is set.
#
# The base is pinned to a Node.js LTS release (24: security fixes until April 2028) by its full
# version: a rebuild gets the same runtime until someone moves the pin. To update it (see
# docs/upgrading.md "Node.js"): pick the newest 24.x from https://nodejs.org/en/about/previous-releases
# (or `npm view node@24 version`), change NODE_IMAGE here, and pin its digest for reproducible
# builds: `docker buildx imagetools inspect node:24.x.y-bookworm-slim` prints it; write
# node:24.x.y-bookworm-slim@sha256:<digest>. test/deploy checks the pin and engines agree.
ARG NODE_IMAGE=node:24.21.0-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
# prepare (tsc) needs the sources, so install without scripts and build explicitly
RUN npm ci --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build

FROM ${NODE_IMAGE}
ENV NODE_ENV=production \
    INTAKE_SYNC_REQUIRE_EXPLICIT_CONFIG=1 \
    HEALTH_PORT=8080
WORKDIR /app
COPY package.json package-lock.json ./
# production dependencies only; no lifecycle scripts (prepare would need tsc)
RUN npm ci --omit=dev --ignore-scripts && npm cache clean --force
COPY --from=build /app/dist ./dist
COPY drizzle ./drizzle
COPY sql/api ./sql/api
USER node
EXPOSE 8080
# liveness only: readiness (/readyz) is for the orchestrator's traffic and rollout decisions
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.HEALTH_PORT || 8080) + '/healthz').then(r => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
ENTRYPOINT ["node", "--max-semi-space-size=1", "--optimize-for-size", "--no-maglev", "--no-wasm-tier-up", "--no-wasm-dynamic-tiering", "dist/cli/main.js"]
CMD ["run"]
