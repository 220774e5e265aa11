/**
 * The workflows' import graph holds no zod. The workflow sandbox evaluates its bundle's modules again for every
 * workflow it starts, so a validation library that any module a workflow reaches imports is paid for twice per signal
 * (CHANGELOG.md, "Performance", 2026-11-28 night: zod's modules were most of the workflow thread's work).
 */

/** Loads `modulePath` in a fresh module registry and says whether anything it reaches imported zod. */
function importsZod(modulePath: string): boolean {
  let imported = false;
  jest.isolateModules(() => {
    jest.doMock('zod', () => {
      imported = true;
      throw new Error('zod imported');
    });
    try {
      // A plain import is hoisted above the mock and loaded once: this must load the graph anew under it.
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      require(modulePath);
    } catch (err) {
      if (!imported) throw err;
    }
  });
  return imported;
}

describe("the workflows' imports", () => {
  test('when the workflows are loaded, then no module they reach imports zod', () => {
    expect(importsZod('../../workflows')).toBe(false);
  });

  test('when a module imports zod, then the check sees it (it can fail)', () => {
    expect(importsZod('../../src/domain/signal')).toBe(true);
  });
});
