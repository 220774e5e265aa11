import fs from 'node:fs';
import path from 'node:path';
import { TEMPORAL_DEV_PROFILE, temporalDevProfileArgs, temporalDevProfilePlusArgs } from '../../scripts/temporal-profile';

const root = path.resolve(__dirname, '..', '..');

/** The one Temporal dev-server profile is what every way of starting the stack uses (docs/temporal-profile.md). */
describe('the Temporal dev-server profile', () => {
  test('when docker-compose.yml starts Temporal, then it passes exactly the profile flags, in order, on a database file', () => {
    const compose = fs.readFileSync(path.join(root, 'docker-compose.yml'), 'utf8');
    const temporal = compose.slice(compose.indexOf('\n  temporal:'), compose.indexOf('\n  redis:'));
    const args = [...temporal.matchAll(/^ {6}- (.+)$/gm)].map((m) => m[1]!.replace(/^"(.*)"$/, '$1'));
    const profile = temporalDevProfileArgs();
    const at = args.indexOf(profile[0]!);
    expect(at).toBeGreaterThan(0);
    expect(args.slice(at, at + profile.length)).toEqual(profile);
    // WAL needs a file; the in-memory database ignores it and loses everything on a restart.
    expect(args[args.indexOf('--db-filename') + 1]).toMatch(/\.db$/);
  });

  test('when make start starts Temporal, then it takes the flags from the profile', () => {
    const start = fs.readFileSync(path.join(root, 'scripts', 'start.sh'), 'utf8');
    expect(start).toMatch(/mapfile -t profile_flags < <\(node dist\/scripts\/temporal-profile\.js\)/);
    expect(start).toMatch(/start-dev .*\\\n.*"\$\{profile_flags\[@\]\}"/);
  });

  test('when the profile is listed, then every setting is a flag start-dev takes with a key=value and says why', () => {
    for (const s of TEMPORAL_DEV_PROFILE) {
      expect(['--dynamic-config-value', '--sqlite-pragma']).toContain(s.flag);
      expect(s.value).toMatch(/^[A-Za-z_.]+=[^=\s]+$/);
      expect(s.why.length).toBeGreaterThan(20);
    }
    // Durable on a process crash: never synchronous=off.
    expect(temporalDevProfileArgs()).not.toContain('synchronous=off');
  });

  test('when candidates are added on top for a measurement, then each becomes its flag, and a malformed one is refused, never skipped', () => {
    expect(temporalDevProfilePlusArgs(undefined)).toEqual([]);
    expect(temporalDevProfilePlusArgs(' history.eventsCacheMaxSizeBytes=67108864 ; pragma:cache_size=-65536; ')).toEqual([
      '--dynamic-config-value',
      'history.eventsCacheMaxSizeBytes=67108864',
      '--sqlite-pragma',
      'cache_size=-65536',
    ]);
    // A typo would otherwise be measured as a candidate that changes nothing.
    for (const bad of ['history.eventsCacheMaxSizeBytes = 67108864', 'GOGC=400', 'pragma:cache size=1', 'matching.x={"a": 1}']) {
      expect(() => temporalDevProfilePlusArgs(bad)).toThrow(/TEMPORAL_DEV_PROFILE_PLUS/);
    }
  });

  test('when the docs list the profile, then they list every flag of it', () => {
    const doc = fs.readFileSync(path.join(root, 'docs', 'temporal-profile.md'), 'utf8');
    for (const s of TEMPORAL_DEV_PROFILE) expect(doc).toContain(`\`${s.value}\``);
  });
});
