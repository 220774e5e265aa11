import fs from 'node:fs';
import path from 'node:path';
import { NODE_FLAGS, nodeFlags } from '../../scripts/node-flags';

const root = path.resolve(__dirname, '..', '..');
const read = (file: string) => fs.readFileSync(path.join(root, file), 'utf8');

/** Every way of starting the ingress runs it with the flags of scripts/node-flags.ts, in order. */
describe('the ingress Node.js flags', () => {
  const flags = nodeFlags('ingress');

  test('when the flags are listed, then each says why and the heap limit leaves room above the measured peak', () => {
    expect(flags.length).toBeGreaterThan(0);
    for (const f of NODE_FLAGS.ingress) expect(f.why.length).toBeGreaterThan(40);
    const heap = flags.find((f) => f.startsWith('--max-old-space-size='));
    // At 160 MB the heap of an ingress that took 1,000 accounts' hellos committed 168 MB and the collector never
    // stopped (1.8 cores idle; CHANGELOG.md, "Performance"); at 512 MB it used 0.04 cores.
    expect(Number(heap?.split('=')[1])).toBeGreaterThanOrEqual(512);
  });

  test('when npm run ingress starts it, then it passes exactly these flags before the entry point', () => {
    const scripts = JSON.parse(read('package.json')).scripts as Record<string, string>;
    expect(scripts.ingress).toBe(['node', ...flags, 'dist/src/server.js'].join(' '));
  });

  test('when the Dockerfile and docker-compose.yml start it, then they pass exactly these flags', () => {
    const exec = JSON.stringify(['node', ...flags, 'dist/src/server.js']).replace(/,/g, ', ');
    expect(read('Dockerfile')).toContain(`CMD ${exec}`);
    const compose = read('docker-compose.yml');
    const ingress = compose.slice(compose.indexOf('\n  ingress:'));
    expect(ingress.slice(0, 300)).toContain(`command: ${exec}`);
  });

  test('when a program has no flags of its own, then it gets none', () => {
    expect(nodeFlags('worker')).toEqual([]);
    expect(nodeFlags('no-such-program')).toEqual([]);
  });
});
