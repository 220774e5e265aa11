import { runAdmin } from '../src/cli/admin';

/**
 * The admin CLI's own code path (runAdmin), in process, against a Redis: the exit code and what it printed. `env`
 * adds settings (e.g. TEMPORAL_ADDRESS for a verb that tells workflows).
 */
export async function adminCli(
  args: string[],
  redisUrl: string,
  stdin = '',
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await runAdmin(args, {
    stdout: (t) => (stdout += t),
    stderr: (t) => (stderr += t),
    stdin: async () => stdin,
    env: { REDIS_URL: redisUrl, ...env },
  });
  return { code, stdout, stderr };
}

/** A verb that must succeed, with --json: its output parsed. */
export async function adminCliJson<T = Record<string, any>>(args: string[], redisUrl: string, env: Record<string, string> = {}): Promise<T> {
  const run = await adminCli([...args, '--json'], redisUrl, '', env);
  if (run.code !== 0) throw new Error(`admin ${args.join(' ')} exited ${run.code}: ${run.stderr}`);
  return JSON.parse(run.stdout) as T;
}
