import { parseOptions, UsageError, type Options } from '../../bench/cli';
import { BAR_CLOSE_ACCOUNTS } from '../../bench/parameters';

/** The bench's command line (bench/cli.ts): its options and scenarios, and the bad input it refuses. */
describe('the bench command line', () => {
  const parse = (...argv: string[]) => parseOptions(argv) as Options;

  test('when no scenario is named, then every scenario runs, the bar closes (12 to 14) included', () => {
    expect([...parse().scenarios].sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14]);
    expect([...parse('--scenario', '10,12,13,14', '--quick').scenarios]).toEqual([10, 12, 13, 14]);
  });

  test('when --bar-close and --steady-sec are given either way, then they are taken, and the next argument is not eaten', () => {
    const opts = parse('--bar-close', '150', '--steady-sec=20', '--scenario', '10,11');
    expect(opts.barClose).toBe(150);
    expect(opts.steadySec).toBe(20);
    expect([...opts.scenarios]).toEqual([10, 11]);
    expect(parse('--bar-close=5', '--quick')).toMatchObject({ barClose: 5, quick: true });
  });

  test('when they are not given, then the bar close has its 100 accounts and the steady phase its plan', () => {
    const opts = parse();
    expect(opts.barClose).toBe(BAR_CLOSE_ACCOUNTS);
    expect(opts.steadySec).toBeUndefined();
  });

  test('when --cpu-prof-threads is given, then the workflow threads are profiled for that long, and the processes too', () => {
    expect(parse('--cpu-prof-threads', '90', '--quick')).toMatchObject({ cpuProf: true, cpuProfThreadsSec: 90, quick: true });
    expect(parse('--cpu-prof')).toMatchObject({ cpuProf: true });
    expect(parse('--cpu-prof').cpuProfThreadsSec).toBeUndefined();
  });

  test.each([
    [['--cpu-prof-threads', '0']],
    [['--cpu-prof-threads=abc']],
    [['--cpu-prof-threads']],
    [['--bar-close', '0']],
    [['--bar-close', '201']],
    [['--bar-close', '1.5']],
    [['--bar-close']],
    [['--steady-sec', 'abc']],
    [['--steady-sec=601']],
    [['--scenario', '15']],
    [['--scenario', '0']],
  ])('when the command line is %j, then it is refused', (argv) => {
    expect(() => parseOptions(argv)).toThrow(UsageError);
  });
});
