import { passwordProblem, PASSWORD_RULES } from '../../src/domain/password-policy';

describe('passwordProblem: what a password of 12 characters or more must not be', () => {
  // Issue 25 finding 7: each of these was accepted.
  it.each([
    ['            ', 'blank', '12 spaces'],
    ['\t\t\t   \n     ', 'blank', 'whitespace of any kind'],
    ['123456789012', 'sequence', 'the digits in a row'],
    ['alice-7alice-7alice-7', 'owner_id', 'the owner id repeated'],
    ['aaaaaaaaaaaa', 'few_characters', 'one key held down'],
    ['my ALICE-7 password!', 'owner_id', 'the owner id anywhere, in any case'],
    ['abababababab', 'few_characters', 'two characters'],
    ['abcdeabcdeabcde', 'repeated', 'one part repeated'],
    ['x9Kp2x9Kp2x9Kp2', 'repeated', 'a random-looking part repeated'],
    ['abcdefghijkl', 'sequence', 'the alphabet'],
    ['qwertyuiop12', 'sequence', 'a keyboard row and digits'],
    ['zyxwvutsrqpo', 'sequence', 'the alphabet backwards'],
    ['abcd1234wxyz', 'sequence', 'three runs'],
    ['aaaabbbbccccdddd9', 'sequence', 'held keys stepping along'],
    ['Password2024!', 'common', 'a common password with a year and a symbol'],
    ['P@ssw0rd12345', 'common', 'look-alike digits'],
    ['iloveyou123456', 'common', 'digits after'],
    ['1q2w3e4r5t6y', 'common', 'a keyboard zigzag'],
    ['!!Monkey!!2023', 'common', 'symbols around'],
    ['trustno1trustno1', 'repeated', 'a common one repeated'],
    ['Football1234567', 'common', 'a sport'],
    ['Trading2025!!', 'common', 'our own words'],
  ])('refuses %j (%s: %s)', (password, rule) => {
    expect(passwordProblem(password, 'alice-7')).toBe(rule);
  });

  it('refuses the part of an e-mail owner id before the @', () => {
    expect(passwordProblem('bob.smith-horse-battery', 'bob.smith@example.com')).toBe('owner_id');
    expect(passwordProblem('bob.smith@example.com!', 'bob.smith@example.com')).toBe('owner_id');
  });

  it.each([
    ['correct horse battery staple', 'a passphrase'],
    ['Tr0ub4dor&3x!', 'mixed'],
    ['a long enough password', 'words, one of them common'],
    ['x7#k2$9!q@4%', 'random symbols'],
    ['pw-9f3a61c0d2b7e8a4c1f0a9b3', 'what the tests generate'],
    ['al-gardens-of-7', 'an owner id of 2 characters (al) is too short to mean it'],
    ['Monkey-4829-Zebra-71', 'a common word among others'],
  ])('allows %j (%s)', (password) => {
    expect(passwordProblem(password, 'al')).toBeUndefined();
  });

  it('names every rule in a sentence an owner can act on', () => {
    for (const sentence of Object.values(PASSWORD_RULES)) expect(sentence).toMatch(/^(must|needs|is) /);
  });
});
