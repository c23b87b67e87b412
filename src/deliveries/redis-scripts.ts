// The Redis store's scripts: the steps that must not interleave with another process's (a task
// write reads the stored state, then replaces it or not; a replay ticket is claimed once), and a
// batch of deliveries written in one command rather than several per delivery.

/**
 * KEYS[1] the delivery's task hash, KEYS[2] the delivery's hash; ARGV[1] the task id, ARGV[2] "1"
 * when the task has ended, else "0", ARGV[3] the task's JSON, ARGV[4] how long (ms) the tasks of a
 * delivery that has not landed are kept. Each field holds "<ordinal> <ended> <json>": the ordinal
 * keeps the order tasks were first written in (a hash has none), the flag lets the script decide
 * without parsing JSON. Returns 1 when written, 0 when an ended task was kept.
 */
export const WRITE_TASK_SCRIPT = `
local current = redis.call('HGET', KEYS[1], ARGV[1])
local ordinal
if current then
  local space = string.find(current, ' ', 1, true)
  if string.sub(current, space + 1, space + 1) == '1' and ARGV[2] == '0' then return 0 end
  ordinal = string.sub(current, 1, space - 1)
else
  ordinal = tostring(redis.call('HLEN', KEYS[1]))
end
redis.call('HSET', KEYS[1], ARGV[1], ordinal .. ' ' .. ARGV[2] .. ' ' .. ARGV[3])
if redis.call('EXISTS', KEYS[2]) == 0 then redis.call('PEXPIRE', KEYS[1], ARGV[4]) end
return 1
`;

/**
 * KEYS[1] the list of waiting tickets ("<ticket> <delivery>", newest at the head), KEYS[2] the hash
 * of claimed tickets; ARGV[1] now (epoch ms). Takes the oldest, notes it claimed and returns it;
 * nil when none waits.
 */
export const CLAIM_REPLAY_SCRIPT = `
local entry = redis.call('RPOP', KEYS[1])
if not entry then return false end
local space = string.find(entry, ' ', 1, true)
redis.call('HSET', KEYS[2], string.sub(entry, 1, space - 1), ARGV[1] .. ' ' .. string.sub(entry, space + 1))
return entry
`;

/** The ordinal and the JSON of a task hash field. */
export function decodeTaskField(field: string): { readonly ordinal: number; readonly json: string } {
  const first = field.indexOf(' ');
  return { ordinal: Number(field.slice(0, first)), json: field.slice(first + 3) };
}

/**
 * KEYS[1] the index; ARGV[1] the key prefix, then five per delivery: id, score (epoch ms), the
 * record's JSON, "<endpoint> <verdict>", the sealed request or "". Each delivery's hash is written
 * and indexed, and its task hash made permanent (task writes that came first were given an expiry
 * in case the delivery never came). One command for a whole batch: its client costs a fraction of
 * four commands a delivery, and the script runs atomically, as a transaction would.
 */
export const WRITE_DELIVERIES_SCRIPT = `
local prefix = ARGV[1]
for i = 2, #ARGV, 5 do
  local id = ARGV[i]
  local delivery = prefix .. 'delivery:' .. id
  local space = string.find(ARGV[i + 3], ' ', 1, true)
  if ARGV[i + 4] == '' then
    redis.call('HDEL', delivery, 'sealed')
    redis.call('HSET', delivery, 'record', ARGV[i + 2], 'endpoint', string.sub(ARGV[i + 3], 1, space - 1), 'verdict', string.sub(ARGV[i + 3], space + 1))
  else
    redis.call('HSET', delivery, 'record', ARGV[i + 2], 'endpoint', string.sub(ARGV[i + 3], 1, space - 1), 'verdict', string.sub(ARGV[i + 3], space + 1), 'sealed', ARGV[i + 4])
  end
  redis.call('ZADD', KEYS[1], ARGV[i + 1], id)
  redis.call('PERSIST', prefix .. 'tasks:' .. id)
end
return 1
`;
