// autocannon with a new id per request: every `[<id>]` in the URL is replaced (its idReplacement
// option). Run as the CLI would be (pinned to the load core by lib/common.mjs) and prints the
// same JSON result; the CLI itself cannot take such a URL, as its argument parser reads the
// brackets as a nested argument list.
//
//   node bench/lib/autocannon-ids.mjs URL CONNECTIONS DURATION METHOD
import autocannon from 'autocannon';

const [url, connections, duration, method] = process.argv.slice(2);
const result = await autocannon({ url, connections: Number(connections), duration: Number(duration), method, idReplacement: true });
process.stdout.write(JSON.stringify(result) + '\n');
