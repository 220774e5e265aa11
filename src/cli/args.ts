import fs from 'node:fs';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { ACCOUNT_ID_PATTERN } from '../domain/account';

/** Argument handling of the admin CLI: hand-rolled on node:util parseArgs, every failure a one-line CliError. */

/** A usage or validation error: exit code 1 and its message, on one line, on stderr. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
    this.name = 'CliError';
  }
}

export type OptionSpec = Record<string, { type: 'string' | 'boolean' }>;

export interface ParsedArgs {
  positionals: string[];
  values: Record<string, string | boolean | undefined>;
}

/** Parses one verb's arguments (everything after the verb words). `--json` and `--help` are accepted by every verb. */
export function parseVerbArgs(args: string[], options: OptionSpec): ParsedArgs {
  try {
    const { values, positionals } = parseArgs({
      args,
      options: { ...options, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
      allowPositionals: true,
      strict: true,
    });
    return { positionals, values: values };
  } catch (err) {
    // node's hint about '--' after an unknown option is noise here.
    throw new CliError(oneLine((err as Error).message).replace(/\. To specify a positional argument.*$/, '.'));
  }
}

/** A zod error as `path: message; path: message` (at most five, then a count), with an optional label per path. */
export function summariseZod(err: z.ZodError, label: (path: PropertyKey[]) => string = (p) => p.map(String).join('.')): string {
  const parts = err.issues.slice(0, 5).map((i) => `${label(i.path) || '(document)'}: ${i.message}`);
  if (err.issues.length > 5) parts.push(`and ${err.issues.length - 5} more`);
  return oneLine(parts.join('; '));
}

export function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ').trim();
}

export function str(values: ParsedArgs['values'], name: string): string | undefined {
  const v = values[name];
  return typeof v === 'string' ? v : undefined;
}

export function requireStr(values: ParsedArgs['values'], name: string): string {
  const v = str(values, name);
  if (v === undefined || v === '') throw new CliError(`--${name} is required`);
  return v;
}

export function expectPositionals(p: ParsedArgs, names: string[]): string[] {
  if (p.positionals.length < names.length) throw new CliError(`missing ${names.slice(p.positionals.length).join(' ')}`);
  if (p.positionals.length > names.length) throw new CliError(`unexpected argument ${JSON.stringify(p.positionals[names.length])}`);
  return p.positionals;
}

export function accountId(value: string, what = 'account id'): string {
  if (!ACCOUNT_ID_PATTERN.test(value)) throw new CliError(`${what} ${JSON.stringify(value)} must be 1 to 64 letters, digits or ._-`);
  return value;
}

/** `--accounts a,b`: at least one, each a valid account id, duplicates dropped. */
export function accountList(value: string | undefined): string[] {
  if (value === undefined) throw new CliError('--accounts is required (comma-separated account ids)');
  const ids = [
    ...new Set(
      value
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
    ),
  ];
  if (ids.length === 0) throw new CliError('--accounts needs at least one account id');
  return ids.map((id) => accountId(id));
}

export function owner(value: string): string {
  if (value.length < 1 || value.length > 128) throw new CliError('--owner must be 1 to 128 characters');
  return value;
}

export function boolFlag(name: string, value: string | undefined): boolean | undefined {
  if (value === undefined) return undefined;
  if (value === 'true') return true;
  if (value === 'false') return false;
  throw new CliError(`--${name} must be true or false, not ${JSON.stringify(value)}`);
}

const isoDate = z.iso.datetime({ offset: true });

/** An ISO 8601 date-time (with Z or an offset) in the future. */
export function futureIso(name: string, value: string, now = Date.now()): string {
  if (!isoDate.safeParse(value).success)
    throw new CliError(`--${name} must be an ISO 8601 date-time such as 2030-01-31T18:00:00Z, not ${JSON.stringify(value)}`);
  if (Date.parse(value) <= now) throw new CliError(`--${name} ${value} is not in the future`);
  return value;
}

/** A JSON flag value: inline JSON, or `@path` to read it from a file. */
export function jsonFlag(name: string, value: string): unknown {
  const text = value.startsWith('@') ? readFile(value.slice(1)) : value;
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new CliError(`--${name} is not valid JSON: ${oneLine((err as Error).message)}`);
  }
}

/** A JSON flag validated by a schema; issues are reported as `--flag path: message`. */
export function parseJsonFlag<S extends z.ZodType>(name: string, value: string, schema: S): z.output<S> {
  const parsed = schema.safeParse(jsonFlag(name, value));
  if (!parsed.success) throw new CliError(`--${name} ${summariseZod(parsed.error, (p) => p.map(String).join('.') || '(value)')}`);
  return parsed.data;
}

export function readFile(path: string): string {
  try {
    return fs.readFileSync(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new CliError(code === 'ENOENT' ? `cannot read ${path}: no such file` : `cannot read ${path}: ${oneLine((err as Error).message)}`);
  }
}

/** A `--id` value: the hex prefix of a credential's SHA-256 that the CLI printed, at least 8 characters. */
export function hashPrefix(value: string): string {
  const v = value.trim().toLowerCase();
  if (!/^[0-9a-f]{8,64}$/.test(v)) throw new CliError(`--id must be 8 to 64 hex characters (the id printed when it was created), not ${JSON.stringify(value)}`);
  return v;
}
