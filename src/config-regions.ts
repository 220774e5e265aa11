import { z } from 'zod';

/** Where signals execute: the Temporal regions of the config (src/config.ts) and how each connection is secured. */

/**
 * How a region's Temporal connection is secured: TLS (with a private CA, a server name, an mTLS client certificate)
 * and an API key (Temporal Cloud). Files, never the secrets themselves: the config holds paths.
 */
const temporalSecuritySchema = z
  .object({
    tls: z
      .union([
        z.literal(true),
        z
          .object({
            caFile: z.string().min(1).optional(),
            certFile: z.string().min(1).optional(),
            keyFile: z.string().min(1).optional(),
            serverName: z.string().min(1).optional(),
          })
          .strict(),
      ])
      .optional(),
    apiKeyFile: z.string().min(1).optional(),
  })
  .refine((r) => r.tls === undefined || r.tls === true || !r.tls.certFile === !r.tls.keyFile, {
    message: 'tls.certFile and tls.keyFile go together (an mTLS client certificate and its key)',
    path: ['certFile'],
  })
  .refine((r) => r.apiKeyFile === undefined || r.tls !== undefined, { message: 'an API key is only sent over TLS: set tls too', path: ['apiKeyFile'] });

const regionSchema = z
  .object({
    name: z.string().regex(/^[a-z0-9][a-z0-9_-]{0,62}$/),
    address: z.string().min(1),
    namespace: z.string().min(1),
  })
  .and(temporalSecuritySchema);
export type RegionConfig = z.infer<typeof regionSchema>;

export function parseRegions(raw: string): RegionConfig[] {
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    throw new Error('Invalid configuration:\nTEMPORAL_REGIONS: must be JSON, e.g. [{"name":"eu","address":"host:7233","namespace":"default"}]');
  }
  const parsed = z.array(regionSchema).min(1).safeParse(json);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `TEMPORAL_REGIONS${i.path.length ? `[${i.path.join('].')}` : ''}: ${i.message}`);
    throw new Error(`Invalid configuration:\n${lines.join('\n')}`);
  }
  const names = parsed.data.map((r) => r.name);
  if (new Set(names).size !== names.length) throw new Error('Invalid configuration:\nTEMPORAL_REGIONS: region names must be unique');
  return parsed.data;
}
