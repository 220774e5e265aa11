# The app image: ingress, worker, paper bridge and admin CLI are the same build with a different command.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci
COPY . .
RUN npm run build

FROM node:20-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev && npm cache clean --force
COPY --from=build /app/dist ./dist
COPY demo ./demo
COPY dashboard ./dashboard
USER node
CMD ["node", "--max-old-space-size=160", "--experimental-websocket", "dist/src/server.js"]
