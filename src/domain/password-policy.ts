/**
 * What a password must not be, beyond its length (issue 25 finding 7: twelve spaces, `123456789012`, the owner id
 * repeated and `aaaaaaaaaaaa` were accepted). Each rule has a name and a sentence the owner reads in the 400: a
 * refused password says which rule it broke. Pure and small on purpose: no dictionary beyond the most common
 * passwords, no score to tune; argon2id and the second factor stand behind it (docs/owners.md).
 */

export type PasswordRule = 'blank' | 'owner_id' | 'few_characters' | 'repeated' | 'sequence' | 'common';

export const PASSWORD_RULES: Record<PasswordRule, string> = {
  blank: 'must not be only spaces',
  owner_id: 'must not contain your owner id',
  few_characters: 'needs at least 5 different characters',
  repeated: 'must not be one short part repeated (like abcabcabcabc)',
  sequence: 'must not be mostly a sequence or one key held down (like 123456789012, abcdefghijkl or qwertyuiop12)',
  common: 'is a common password, or one with only digits or symbols around it (like Password2024!)',
};

/** The first rule the password breaks, or undefined. Length is checked before (passwordSchema). */
export function passwordProblem(password: string, ownerId: string): PasswordRule | undefined {
  const lower = password.toLowerCase();
  if (password.trim() === '') return 'blank';
  if (ownerIdParts(ownerId).some((part) => lower.includes(part))) return 'owner_id';
  if (new Set(lower).size < 5) return 'few_characters';
  if (unitOf(lower) !== lower) return 'repeated';
  if (breaks(lower) < 4) return 'sequence';
  if (commonForms(lower).some((form) => COMMON.has(form) || COMMON.has(unitOf(form)))) return 'common';
  return undefined;
}

/** The owner id, and the part before an `@` when it is an e-mail address; parts under 3 characters are too short to mean it. */
function ownerIdParts(ownerId: string): string[] {
  const id = ownerId.toLowerCase();
  return [id, id.split('@')[0]!].filter((part) => part.length >= 3);
}

/** The shortest part the text is a repetition of (`abcabc` → `abc`); the text itself when it is none. */
function unitOf(text: string): string {
  for (let size = 1; size <= text.length / 2; size++) {
    if (text.length % size === 0 && text.slice(0, size).repeat(text.length / size) === text) return text.slice(0, size);
  }
  return text;
}

/** Rows a person runs along: the alphabet, the digits (9 then 0 again) and the keyboard's rows. */
const RUNS = ['abcdefghijklmnopqrstuvwxyz', '01234567890', '1234567890', 'qwertyuiop', 'asdfghjkl', 'zxcvbnm'];

/** Neighbours in a run, either way, or the same key again. */
function predictable(a: string, b: string): boolean {
  if (a === b) return true;
  return RUNS.some((run) => {
    const i = run.indexOf(a);
    return i >= 0 && (run[i + 1] === b || run[i - 1] === b);
  });
}

/** How many times the next character is not one a run or a held key would give. */
function breaks(text: string): number {
  let count = 0;
  for (let i = 1; i < text.length; i++) if (!predictable(text[i - 1]!, text[i]!)) count++;
  return count;
}

const LEET: Record<string, string> = { '0': 'o', '1': 'i', '3': 'e', '4': 'a', '5': 's', '7': 't', '@': 'a', $: 's', '!': 'i' };

/**
 * The password as the list is matched against it: itself, without the digits and symbols around it (`password2024!`),
 * its letters alone (`1q2w3e4r5t6y` → `qwerty`), and with look-alike digits read as letters (`p@ssw0rd`).
 */
function commonForms(lower: string): string[] {
  const core = lower.replace(/^[^a-z]+|[^a-z]+$/g, '');
  const letters = lower.replace(/[^a-z]/g, '');
  const readAsLetters = core.replace(/[0-9@$!]/g, (c) => LEET[c] ?? c);
  return [lower, core, letters, readAsLetters, readAsLetters.replace(/i/g, 'l')].filter((form) => form !== '');
}

/** The most common passwords and the words they are built on (the top of the public breach lists), and our own words. */
const COMMON = new Set(
  `
password passw pass passwd passphrase qwerty qwertz azerty qwertyuiop asdfgh asdfghjkl zxcvbn zxcvbnm qazwsx qazwsxedc
qwe qweasd qweasdzxc asdasd zaq zaqxsw abc abcd abcdef abcdefg abcdefgh iloveyou iloveu loveyou love lovely letmein
welcome hello helloworld admin administrator root toor login user guest test tester testing default changeme secret
master monkey dragon shadow sunshine princess football baseball basketball soccer hockey superman batman spiderman
starwars pokemon whatever freedom trustno trustnoone michael jordan jennifer jessica ashley charlie daniel thomas
robert george andrew joshua matthew michelle nicole amanda summer winter autumn spring flower buster tigger pepper
ginger maggie cheese chocolate cookie biteme killer hunter ranger mustang harley thunder matrix access computer
internet google facebook yahoo microsoft apple samsung iphone android linkedin twitter instagram zoom
money dollar euro gold trading trader trade forex fxtrader metatrader mt ctrader signal signals broker bitcoin crypto
blockchain ethereum profit invest investor stocks market dashboard owner owners account accounts
`
    .split(/\s+/)
    .filter(Boolean),
);
