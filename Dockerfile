# The app image: ingress, worker, paper bridge and admin CLI are the same build with a different command.
FROM node:24-bookworm-slim AS build
WORKDIR /app
# Python builds the MT5 bridge's wheel for the package the ingress hands out (make dist, docs/mt5-bridge.md).
RUN apt-get update && apt-get install -y --no-install-recommends python3 python3-venv && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
RUN npm ci
COPY . .
RUN npm run build && PYTHON="$(bash scripts/ensure-python.sh)" SKIP_BUILD=1 bash scripts/dist.sh

FROM node:24-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev && npm cache clean --force
COPY --from=build /app/dist ./dist
COPY demo ./demo
COPY dashboard ./dashboard
# The guides the dashboard links (GET /docs/guides/..., src/http/routes/landing.ts).
COPY docs ./docs
USER node
CMD ["node", "--max-old-space-size=512", "dist/src/server.js"]
