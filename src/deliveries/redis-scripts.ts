// The Redis store's two steps that must not interleave with another process's: a task write
// (read the stored state, then replace it or not) and the claim of a replay ticket.

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
