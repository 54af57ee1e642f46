# syntax=docker/dockerfile:1
# netattach image: TypeScript compiled in a build stage, production dependencies installed in a
# second one, and only those plus dist/ and schemas/ in a distroless Node runtime (no shell, no
# package manager) that runs as user 65532. Node.js 26 (LTS) in every stage, the line package.json
# pins for development (devDependencies.node) and CI; the build stages on Debian 13 like the runtime.
#   docker build -t ghcr.io/netattach/netattach:0.1.0 .

ARG NODE_IMAGE=node:26-trixie-slim
ARG RUNTIME_IMAGE=gcr.io/distroless/nodejs26-debian13:nonroot

FROM ${NODE_IMAGE} AS build
WORKDIR /src
COPY package.json package-lock.json ./
# --ignore-scripts: `prepare` would build before the sources are copied; it also skips the dev
# dependency `node` (the pinned runtime for development machines), so the image's own Node runs tsc.
RUN npm ci --no-audit --no-fund --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build

FROM ${NODE_IMAGE} AS prod-deps
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund --ignore-scripts

FROM ${RUNTIME_IMAGE} AS runtime
WORKDIR /app
ENV NODE_ENV=production
# V8 memory settings, as manifests/base/deployment.yaml: the heap cap, and 1 MiB young-generation
# semi-spaces (RSS after load 84 MB instead of 119 MB; docs/performance.md).
ENV NODE_OPTIONS="--max-old-space-size=192 --max-semi-space-size=1"
# Two glibc malloc arenas (the runtime is Debian's glibc): 4-6 MB less RSS after load.
ENV MALLOC_ARENA_MAX="2"
# package.json marks the root that schemas/ is looked up from (and makes dist/ ESM).
COPY package.json ./
COPY schemas ./schemas
COPY --from=prod-deps /src/node_modules ./node_modules
COPY --from=build /src/dist/src ./dist/src
USER 65532:65532
# 8443: webhook (HTTPS); 8080: /healthz, /readyz, /metrics (HTTP).
EXPOSE 8443 8080
ENTRYPOINT ["/nodejs/bin/node", "dist/src/cli/main.js"]
CMD ["--help"]
