// The Redis store's scripts: the steps that must not interleave with another process's (a task
// write reads the stored state, then replaces it or not; a replay ticket is claimed once), and a
// batch's deliveries and task writes each written in one command rather than several apiece.

/**
 * ARGV[1] the key prefix, ARGV[2] how long (ms) the tasks of a delivery that has not landed are
 * kept, then four per task write, in the order they came: the delivery's id, the task id, "1" when
 * the task has ended, else "0", the task's JSON. Each field of a delivery's task hash holds
 * "<ordinal> <ended> <json>": the ordinal keeps the order tasks were first written in (a hash has
 * none), the flag lets the script decide without parsing JSON; an ended task is not replaced by
 * one that has not. One command for a whole batch, as for its deliveries: a worker writes an
 * outcome for every task it runs, and a command for each doubled the scripts a job sends.
 */
export const WRITE_TASKS_SCRIPT = `
local prefix = ARGV[1]
for i = 3, #ARGV, 4 do
  local tasks = prefix .. 'tasks:' .. ARGV[i]
  local current = redis.call('HGET', tasks, ARGV[i + 1])
  local ordinal = nil
  if current then
    local space = string.find(current, ' ', 1, true)
    if not (string.sub(current, space + 1, space + 1) == '1' and ARGV[i + 2] == '0') then ordinal = string.sub(current, 1, space - 1) end
  else
    ordinal = tostring(redis.call('HLEN', tasks))
  end
  if ordinal then
    redis.call('HSET', tasks, ARGV[i + 1], ordinal .. ' ' .. ARGV[i + 2] .. ' ' .. ARGV[i + 3])
    if redis.call('EXISTS', prefix .. 'delivery:' .. ARGV[i]) == 0 then redis.call('PEXPIRE', tasks, ARGV[2]) end
  end
end
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
