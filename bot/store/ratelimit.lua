-- Sliding-window rate limits shared by every replica: take one slot in every window, or
-- say how long to wait. KEYS: one sorted set per window (a chat, a group, the bot).
-- ARGV[1]: now (ms); ARGV[2]: a unique id for this send; then per key: count, per (ms), and
-- hold (ms): a send is counted from now + hold until its answer re-stamps it (a send still
-- on its way may arrive up to that much later than it left).
local now = tonumber(ARGV[1])
local wait = 0
for i, key in ipairs(KEYS) do
  local count = tonumber(ARGV[3 * i])
  local per = tonumber(ARGV[3 * i + 1])
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now - per)
  local n = redis.call('ZCARD', key)
  if n >= count then
    local oldest = redis.call('ZRANGE', key, n - count, n - count, 'WITHSCORES')
    local w = tonumber(oldest[2]) + per - now
    if w > wait then wait = w end
  end
end
if wait > 0 then return wait end
for i, key in ipairs(KEYS) do
  local hold = tonumber(ARGV[3 * i + 2])
  redis.call('ZADD', key, now + hold, ARGV[2])
  redis.call('PEXPIRE', key, tonumber(ARGV[3 * i + 1]) + hold)
end
return 0
