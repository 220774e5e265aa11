/**
 * Preloaded into the ingress, the worker and the paper bridge by `npm run bench -- --cpu-prof` (NODE_OPTIONS=--require, since Node 20
 * does not take --cpu-prof in NODE_OPTIONS): profiles the whole life of the process with the inspector's sampling
 * profiler and writes a .cpuprofile (Chrome DevTools / speedscope format) into $BENCH_CPU_PROFILE_DIR when the process
 * exits (each program exits through process.exit on SIGTERM).
 */
import fs from 'node:fs';
import inspector from 'node:inspector';
import path from 'node:path';

const dir = process.env.BENCH_CPU_PROFILE_DIR;
if (dir) {
  const session = new inspector.Session();
  session.connect();
  session.post('Profiler.enable');
  session.post('Profiler.setSamplingInterval', { interval: Number(process.env.BENCH_CPU_PROFILE_INTERVAL_US ?? 1000) });
  session.post('Profiler.start');
  process.once('exit', () => {
    // The same-thread session answers synchronously, so this completes inside the exit handler.
    session.post('Profiler.stop', (err, result) => {
      if (err || !result) return;
      fs.mkdirSync(dir, { recursive: true });
      const name = `${path.basename(process.argv[1] ?? 'node', '.js')}-${process.pid}-${Date.now()}.cpuprofile`;
      fs.writeFileSync(path.join(dir, name), JSON.stringify(result.profile));
    });
  });
}
