/**
 * Preloaded into the ingress, the worker and the paper bridge by `npm run bench -- --cpu-prof` (NODE_OPTIONS=--require, since Node 20
 * does not take --cpu-prof in NODE_OPTIONS): profiles the whole life of the process with the inspector's sampling
 * profiler and writes a .cpuprofile (Chrome DevTools / speedscope format) into $BENCH_CPU_PROFILE_DIR when the process
 * exits (each program exits through process.exit on SIGTERM). Node runs the preload in worker threads too: the
 * worker's workflow threads are profiled for their first $BENCH_CPU_PROFILE_THREAD_SEC seconds (`--cpu-prof-threads`)
 * and write their profile then, since the SDK ends them without an exit event; otherwise they are not profiled.
 */
import fs from 'node:fs';
import inspector from 'node:inspector';
import path from 'node:path';
import { isMainThread, threadId } from 'node:worker_threads';

const dir = process.env.BENCH_CPU_PROFILE_DIR;
const threadSec = Number(process.env.BENCH_CPU_PROFILE_THREAD_SEC ?? 0);
if (dir && (isMainThread || threadSec > 0)) {
  const session = new inspector.Session();
  session.connect();
  session.post('Profiler.enable');
  session.post('Profiler.setSamplingInterval', { interval: Number(process.env.BENCH_CPU_PROFILE_INTERVAL_US ?? 1000) });
  session.post('Profiler.start');
  const write = (profile: object, name: string): void => {
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, name), JSON.stringify(profile));
  };
  if (!isMainThread) {
    setTimeout(() => {
      session.post('Profiler.stop', (err, result) => {
        if (!err && result) write(result.profile, `thread-${process.pid}-${threadId}-${Date.now()}.cpuprofile`);
      });
    }, threadSec * 1000).unref();
  } else {
    process.once('exit', () => {
      // The same-thread session answers synchronously, so this completes inside the exit handler.
      session.post('Profiler.stop', (err, result) => {
        if (!err && result) write(result.profile, `${path.basename(process.argv[1] ?? 'node', '.js')}-${process.pid}-${Date.now()}.cpuprofile`);
      });
    });
  }
}
