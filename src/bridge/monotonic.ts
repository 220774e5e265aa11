/**
 * A Lua function for the bridge scripts: the next number of a counter that never goes back, even when Redis lost the
 * counter (a restart without persistence, a failover to an empty replica, FLUSHALL, an expired key). Numbers handed
 * out before the loss live on outside Redis (an ingress remembers the newest long-poll generation it saw; running
 * workflows hold their commands' sequence numbers), so a counter restarted at 1 would number new things below old
 * ones. The next number is the counter plus one, but never less than Redis's clock in `perSecond` units: after a loss
 * it is above every number given before, as long as fewer than `perSecond` numbers a second were taken on average
 * since the counter's first (a long-poll a second at most, a fairness-throttled signal stream).
 *
 * Numbers reach strings through string.format('%d'): Lua's own tostring writes numbers past 14 digits in exponent form.
 */
export const MONOTONIC_NEXT_LUA = `
local function monotonicNext(key, perSecond)
  local t = redis.call('TIME')
  local clock = tonumber(t[1]) * perSecond + math.floor(tonumber(t[2]) * perSecond / 1000000)
  local n = tonumber(redis.call('GET', key) or '0') + 1
  if n < clock then n = clock end
  redis.call('SET', key, string.format('%d', n))
  return n
end`;
