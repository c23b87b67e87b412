// Where the stores keep groups of sealed requests (sealed-request.ts) and when they let one go.
// A group is written in the same transaction as the deliveries that name it, after each of them
// was received, so a group written before the oldest delivery left was received names none of
// them any more. The margin covers a clock set back between a request and its write.

/** How much longer than that a group is kept. */
export const GROUP_MARGIN_MS = 60_000;

/** The SQL stores' insert of a group into `table` ($1/? id, written ms, sealed); written again, it replaces itself. */
export function upsertGroupSql(table: string, placeholder: (n: number) => string): string {
  return `INSERT INTO ${table} (id, written_ms, sealed) VALUES (${placeholder(1)}, ${placeholder(2)}, ${placeholder(3)})
ON CONFLICT (id) DO UPDATE SET written_ms = EXCLUDED.written_ms, sealed = EXCLUDED.sealed`;
}

/** Deletes the groups no delivery of `deliveries` can name; its one parameter is now (epoch ms), for a log left empty. */
export function pruneGroupsSql(groups: string, deliveries: string, placeholder: (n: number) => string): string {
  return `DELETE FROM ${groups} WHERE written_ms < coalesce((SELECT min(received_ms) FROM ${deliveries}), ${placeholder(1)}) - ${GROUP_MARGIN_MS}`;
}
