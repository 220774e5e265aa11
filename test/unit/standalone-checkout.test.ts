import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from '../../support/infra';

/**
 * The repository stands alone: no tracked file names the folder beside the checkout that a maintainer's machine may
 * have (its name is built from parts here, so this file does not name it either). Code, tests, scripts and docs read
 * what they need from the repository or from pinned registry packages, so a plain clone builds and tests.
 */

const OUTSIDE = ['..', 'shared'].join('/');

function trackedFiles(): string[] {
  return execFileSync('git', ['-C', REPO_ROOT, 'ls-files', '-z'], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 })
    .split('\0')
    .filter((f) => f !== '');
}

describe('the checkout stands alone', () => {
  test('when every tracked file is read, then none names the folder beside the checkout', () => {
    const files = trackedFiles();
    expect(files.length).toBeGreaterThan(100);
    const naming = files.filter((file) => {
      const full = path.join(REPO_ROOT, file);
      // A file deleted in the work tree but not yet from the index is not read.
      if (!fs.existsSync(full) || !fs.statSync(full).isFile()) return false;
      return fs.readFileSync(full).includes(OUTSIDE);
    });
    expect(naming).toEqual([]);
  });
});
