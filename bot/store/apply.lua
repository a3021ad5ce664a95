-- Apply one command's writes atomically, in one round trip.
-- KEYS[1]: the key prefix every key below is relative to (e.g. "md:{fx1}:"), so a
--          command's keys share one hash slot.
-- KEYS[2..]: every key the ops touch (bot/store/keys.py derives them); a key found inside
--          the script (a merge candidate, a type index) is declared as "<family>*".
--          Touching an undeclared key is an error (Redis Cluster only guards declared keys).
-- ARGV[1]: dedupe id ("" for none); ARGV[2]: dedupe TTL seconds; ARGV[3]: ops as MessagePack
-- (or as JSON: a payload starting with '[').
-- ARGV[4]: when the client sent the write (ms, its wall clock; "" for no fence); ARGV[5]: the
-- longest it may have waited to run (ms). Older, it waited in a paused server, which the
-- sentinels may have replaced meanwhile: refused, nothing written (see WRITE_FENCE_MS).
-- A string argument is always taken literally. A value the script fills in is a map
-- (see bot/store/ops.py): {"v": name} a variable set by an earlier op, {"t": [parts]} the
-- parts joined, {"q": value} the value as a JSON string (inside event data).
-- Guards (require_*) must come before writes: a refused command writes nothing.
local p = KEYS[1]
local vars = {}
local hashes = {}
local declared = {}
for j = 2, #KEYS do declared[KEYS[j]] = true end
if ARGV[4] and ARGV[4] ~= '' then
  local t = redis.call('TIME')
  local waited = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) - tonumber(ARGV[4])
  if waited > tonumber(ARGV[5]) then
    return redis.error_reply('FENCED the write waited ' .. waited .. ' ms to run (over ' ..
      ARGV[5] .. ' ms): this server was paused and may have been replaced')
  end
end
local function undeclared(key)
  return redis.error_reply('apply.lua: undeclared key ' .. key)
end
if ARGV[1] ~= '' then
  local dk = p .. 'dedupe:' .. ARGV[1]
  if not declared[dk] then return undeclared(dk) end
  local seen = redis.call('GET', dk)
  if seen then
    -- a write of our own, so a WAIT after this resend confirms the original is replicated
    redis.call('EXPIRE', dk, tonumber(ARGV[2]))
    return {'dup', seen}
  end
end
local function sub(s)
  if type(s) ~= 'table' then return s end
  if s.v then return vars[s.v] or '' end
  if s.q then return cjson.encode(sub(s.q)) end
  local out = {}
  for j, part in ipairs(s.t) do out[j] = sub(part) end
  return table.concat(out)
end
local function shape(s)
  -- a key as bot/store/keys.py declares it: each filled-in value written as $name
  if type(s) ~= 'table' then return s end
  if s.v then return '$' .. s.v end
  local out = {}
  for j, part in ipairs(s.t) do out[j] = shape(part) end
  return table.concat(out)
end
local function k(s)
  local key = p .. sub(s)
  if not declared[key] and not declared[p .. shape(s)] then error('undeclared key ' .. key) end
  return key
end
local function kf(family, rest)
  -- a key the script found itself (e.g. a candidate incident), in a declared family
  if not declared[p .. family .. '*'] then error('undeclared key family ' .. family) end
  return p .. family .. rest
end
local function decode(s)
  if string.byte(s, 1) == 91 then return cjson.decode(s) end  -- '[': JSON
  return cmsgpack.unpack(s)
end
local function holds(v, cmp, value)
  -- '<' as numbers, '==' as strings (e.g. raise a severity only when it is higher)
  if cmp == '<' then return (tonumber(v) or 0) < tonumber(value) end
  if cmp == '==' then return v == tostring(value) end
  return false
end
local run
-- Run a list of ops; a refusal or an error ends the whole script (returned, not nil).
run = function(ops)
local i = 0
while i < #ops do
  i = i + 1
  local op = ops[i]
  local o = op[1]
  if o == 'require_exists' then
    if redis.call('EXISTS', k(op[2])) == 0 then return {'refused', sub(op[3])} end
  elseif o == 'require_missing' then
    if redis.call('EXISTS', k(op[2])) == 1 then return {'refused', sub(op[3])} end
  elseif o == 'require_in' then
    local v = redis.call('HGET', k(op[2]), op[3])
    local okv = false
    for _, allowed in ipairs(op[4]) do if v == allowed then okv = true end end
    if not okv then
      vars['current'] = v or ''
      return {'refused', sub(op[5])}
    end
  elseif o == 'hget' then
    vars[op[4]] = redis.call('HGET', k(op[2]), op[3]) or (op[5] or '')
  elseif o == 'get' then
    vars[op[3]] = redis.call('GET', k(op[2])) or (op[4] or '')
  elseif o == 'incr' then
    vars[op[3]] = tostring(redis.call('INCR', k(op[2])))
  elseif o == 'hset' then
    local args = {}
    for i = 3, #op do args[#args + 1] = sub(op[i]) end
    redis.call('HSET', k(op[2]), unpack(args))
  elseif o == 'hsetnx' then
    redis.call('HSETNX', k(op[2]), sub(op[3]), sub(op[4]))
  elseif o == 'hincrby' then
    redis.call('HINCRBY', k(op[2]), sub(op[3]), op[4])
  elseif o == 'hincrby_many' then
    local key = k(op[2])
    for j = 3, #op, 2 do redis.call('HINCRBY', key, sub(op[j]), op[j + 1]) end
  elseif o == 'set' then
    if op[4] and op[4] > 0 then
      redis.call('SET', k(op[2]), sub(op[3]), 'EX', op[4])
    else
      redis.call('SET', k(op[2]), sub(op[3]))
    end
  elseif o == 'del' then
    redis.call('DEL', k(op[2]))
  elseif o == 'zadd' then
    redis.call('ZADD', k(op[2]), op[3], sub(op[4]))
  elseif o == 'zadd_score_from' then
    -- score = op[5] + field value (e.g. a severity band plus reported time)
    local v = tonumber(redis.call('HGET', k(op[3]), op[4]) or '0')
    redis.call('ZADD', k(op[2]), op[5] + v, sub(op[6]))
  elseif o == 'zrem_by_field' then
    -- ZREM from the key named by a prefix plus a hash field (e.g. the incident's type index)
    local v = redis.call('HGET', k(op[3]), op[4])
    if v then redis.call('ZREM', kf(op[2], v), sub(op[5])) end
  elseif o == 'zrem' then
    redis.call('ZREM', k(op[2]), sub(op[3]))
  elseif o == 'zadd_since' then
    -- record seconds elapsed since a timestamp field, once (first time wins)
    local since = tonumber(redis.call('HGET', k(op[3]), op[4]) or '')
    if since then
      redis.call('ZADD', k(op[2]), 'NX', op[5] - since, sub(op[6]))
    end
  elseif o == 'hsetnx_since' then
    -- hash field = seconds since a timestamp field of the same hash, once (first time wins)
    local since = tonumber(redis.call('HGET', k(op[2]), op[4]) or '')
    if since then
      redis.call('HSETNX', k(op[2]), op[3], tostring(op[5] - since))
    end
  elseif o == 'rpush' then
    redis.call('RPUSH', k(op[2]), sub(op[3]))
  elseif o == 'sadd' then
    redis.call('SADD', k(op[2]), sub(op[3]))
  elseif o == 'srem' then
    redis.call('SREM', k(op[2]), sub(op[3]))
  elseif o == 'xadd' then
    local args = {}
    for i = 3, #op do args[#args + 1] = sub(op[i]) end
    vars['event'] = redis.call('XADD', k(op[2]), '*', unpack(args))
  elseif o == 'skip_if' then
    -- skip the next op[3] ops when variable op[2] is set (branching without a round trip)
    if (vars[op[2]] or '') ~= '' then i = i + op[3] end
  elseif o == 'skip_unless' then
    if (vars[op[2]] or '') == '' then i = i + op[3] end
  elseif o == 'skip_unless_cmp' then
    -- {var, '<' or '==', value, n}: skip the next n ops unless variable op[2] compares so
    if not holds(vars[op[2]] or '', op[3], op[4]) then i = i + op[5] end
  elseif o == 'run_if' or o == 'run_unless' or o == 'run_if_cmp' then
    -- {var, [cmp, value,] ops}: a branch as its own encoded list, decoded only when taken
    -- (a report's merge branch is most of its payload and is seldom taken)
    local v = vars[op[2]] or ''
    local take
    if o == 'run_if' then take = v ~= '' elseif o == 'run_unless' then take = v == ''
    else take = holds(v, op[3], op[4]) end
    if take then
      local res = run(decode(op[#op]))
      if res then return res end
    end
  elseif o == 'find_similar' then
    -- {index, since, type, near zones, affiliation, own zone, var}: the open incident of
    -- this type in a near zone reported since `since`, same zone first, newest 50 only
    local ids = redis.call('ZREVRANGEBYSCORE', k(op[2]), '+inf', op[3], 'LIMIT', 0, 50)
    local near = {}
    for _, z in ipairs(op[5]) do near[z] = true end
    local best, same = '', ''
    for _, n in ipairs(ids) do
      local f = redis.call('HMGET', kf('inc:', n), 'type', 'location', 'status',
                               'affiliation')
      local aff = f[4] or 'unknown'
      if f[1] == op[4] and f[3] and f[3] ~= 'closed' and near[f[2]]
         and (aff == op[6] or aff == 'unknown' or op[6] == 'unknown') then
        best = n  -- ids run newest first, so the last match is the oldest
        if f[2] == op[7] then same = n end
      end
    end
    vars[op[8]] = (same ~= '' and same) or best
  elseif o == 'outbox' then
    -- {stream, message JSON}: what this write makes someone see, durable with the write
    redis.call('XADD', k(op[2]), '*', 'm', sub(op[3]))
  elseif o == 'return_hash' then
    hashes[#hashes + 1] = redis.call('HGETALL', k(op[2]))
  else
    return redis.error_reply('apply.lua: unknown op ' .. tostring(o))
  end
end
return nil
end
local res = run(decode(ARGV[3]))
if res then return res end
local result = cjson.encode(vars)
if ARGV[1] ~= '' then
  redis.call('SET', p .. 'dedupe:' .. ARGV[1], result, 'EX', tonumber(ARGV[2]))
end
return {'ok', result, hashes}
