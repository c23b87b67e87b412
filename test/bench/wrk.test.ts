// The figures P1 --driver wrk takes from wrk's --latency output. wrk is a system program, not
// always installed, so the parser is tested on text: OK is wrk 4.1's output as printed on this
// machine; FAILING has the lines wrk adds when something went wrong (socket errors, statuses
// >= 400, in the order wrk prints them) and latencies in seconds.
import { describe, expect, it } from 'vitest';
// @ts-expect-error: a plain ES module of the benchmarks, without types
import { parseWrk } from '../../bench/lib/common.mjs';

const OK = `Running 2s test @ http://127.0.0.1:46237/p1?a=hello&b=w%C3%B6rld
  1 threads and 10 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency   304.13us  806.97us  20.71ms   95.34%
    Req/Sec    57.61k    19.85k   73.73k    85.00%
  Latency Distribution
     50%  131.00us
     75%  221.00us
     90%  408.00us
     99%    3.11ms
  114354 requests in 2.00s, 18.98MB read
Requests/sec:  57138.49
Transfer/sec:      9.48MB
`;

const FAILING = `Running 1s test @ http://127.0.0.1:46237/nope?a=1
  1 threads and 32 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency     1.02s   258.44ms    1.99s    94.88%
    Req/Sec    63.80k    20.29k   75.96k    80.00%
  Latency Distribution
     50%  980.00ms
     75%     1.10s
     90%     1.50s
     99%     1.98s
  63313 requests in 1.00s, 10.93MB read
  Socket errors: connect 0, read 3, write 0, timeout 12
  Non-2xx or 3xx responses: 63313
Requests/sec:  63296.48
Transfer/sec:     10.93MB
`;

describe('parseWrk', () => {
  it('reads req/s, the request count and the latencies in ms', () => {
    const r = parseWrk(OK);
    expect(r.rps).toBeCloseTo(57138.49);
    expect(r.requests).toBe(114354);
    expect(r.non2xx).toBe(0);
    expect(r.socketErrors).toBe(0);
    expect(r.mean).toBeCloseTo(0.30413);
    expect(r.max).toBeCloseTo(20.71);
    expect(r.p50).toBeCloseTo(0.131);
    expect(r.p99).toBeCloseTo(3.11);
  });

  it('reads seconds, failed answers and socket errors', () => {
    const r = parseWrk(FAILING);
    expect(r.p50).toBeCloseTo(980);
    expect(r.p99).toBeCloseTo(1980);
    expect(r.mean).toBeCloseTo(1020);
    expect(r.non2xx).toBe(63313);
    expect(r.socketErrors).toBe(15);
    expect(r.socketErrorText).toBe('connect 0, read 3, write 0, timeout 12');
  });

  it('refuses output without the latency distribution (no --latency)', () => {
    expect(() => parseWrk(OK.replace(/ {2}Latency Distribution[\s\S]*?99%.*\n/, ''))).toThrow(/p50/);
  });
});
