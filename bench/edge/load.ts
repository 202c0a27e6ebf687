// The load generator of bench/edge, run as its own process so it never shares an event loop with
// the bench's bookkeeping: autocannon with the options given as JSON in argv[2]; prints one JSON line.
import autocannon from 'autocannon';

const options = JSON.parse(process.argv[2]!) as autocannon.Options;
const result = await autocannon(options);
const cpu = process.cpuUsage();
console.log(
  JSON.stringify({
    requestsPerSecond: result.requests.average,
    requests: result.requests.total,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.non2xx + result.errors + result.timeouts,
    cpuMicros: cpu.user + cpu.system,
  }),
);
