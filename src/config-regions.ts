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

/** The settings of the single region (TEMPORAL_ADDRESS and its TLS and API key files). */
export interface SingleRegionEnv {
  TEMPORAL_ADDRESS: string;
  TEMPORAL_NAMESPACE: string;
  TEMPORAL_TLS?: string | undefined;
  TEMPORAL_TLS_CA_FILE?: string | undefined;
  TEMPORAL_TLS_CERT_FILE?: string | undefined;
  TEMPORAL_TLS_KEY_FILE?: string | undefined;
  TEMPORAL_TLS_SERVER_NAME?: string | undefined;
  TEMPORAL_API_KEY_FILE?: string | undefined;
}

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

/** The one region of TEMPORAL_ADDRESS / TEMPORAL_NAMESPACE, secured by the TEMPORAL_TLS_* and API key settings. */
export function singleRegion(e: SingleRegionEnv): RegionConfig {
  const files = {
    caFile: e.TEMPORAL_TLS_CA_FILE,
    certFile: e.TEMPORAL_TLS_CERT_FILE,
    keyFile: e.TEMPORAL_TLS_KEY_FILE,
    serverName: e.TEMPORAL_TLS_SERVER_NAME,
  };
  const given = Object.fromEntries(Object.entries(files).filter(([, v]) => v !== undefined));
  const tls = Object.keys(given).length > 0 ? given : e.TEMPORAL_TLS === 'true' ? true : undefined;
  const region = {
    name: 'default',
    address: e.TEMPORAL_ADDRESS,
    namespace: e.TEMPORAL_NAMESPACE,
    ...(tls ? { tls } : {}),
    ...(e.TEMPORAL_API_KEY_FILE ? { apiKeyFile: e.TEMPORAL_API_KEY_FILE } : {}),
  };
  const parsed = regionSchema.safeParse(region);
  if (!parsed.success) {
    const env: Record<string, string> = { certFile: 'TEMPORAL_TLS_CERT_FILE', keyFile: 'TEMPORAL_TLS_KEY_FILE', apiKeyFile: 'TEMPORAL_API_KEY_FILE' };
    throw new Error(`Invalid configuration:\n${parsed.error.issues.map((i) => `${env[String(i.path.at(-1))] ?? 'TEMPORAL_TLS'}: ${i.message}`).join('\n')}`);
  }
  return parsed.data;
}
