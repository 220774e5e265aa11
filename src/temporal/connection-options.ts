import fs from 'node:fs';
import type { TLSConfig } from '@temporalio/client';
import type { RegionConfig } from '../config-regions';

/** What both the client's and the worker's connections take: the address, TLS and an API key. */
export interface TemporalConnectionOptions {
  address: string;
  tls?: TLSConfig | true;
  apiKey?: string;
}

/**
 * A region's connection options, its files read once at start. A file that cannot be read stops the process with
 * the setting's name and the path, never the file's content.
 */
export function temporalConnectionOptions(region: RegionConfig, read: (file: string) => Buffer = fs.readFileSync): TemporalConnectionOptions {
  const load = (what: string, file: string): Buffer => {
    try {
      const content = read(file);
      if (content.length === 0) throw new Error('empty');
      return content;
    } catch (err) {
      throw new Error(
        `Invalid configuration:\nregion ${region.name}: ${what} ${file} cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`,
        { cause: err },
      );
    }
  };
  const options: TemporalConnectionOptions = { address: region.address };
  if (region.tls === true) options.tls = true;
  else if (region.tls) {
    const { caFile, certFile, keyFile, serverName } = region.tls;
    options.tls = {
      ...(serverName ? { serverNameOverride: serverName } : {}),
      ...(caFile ? { serverRootCACertificate: load('the TLS CA file', caFile) } : {}),
      ...(certFile && keyFile ? { clientCertPair: { crt: load('the TLS client certificate', certFile), key: load('the TLS client key', keyFile) } } : {}),
    };
  }
  if (region.apiKeyFile) options.apiKey = load('the API key file', region.apiKeyFile).toString('utf8').trim();
  return options;
}
