/**
 * A private CA and certificates signed by it, made with openssl for a test: a server certificate for 127.0.0.1 and
 * localhost, and client certificates for mTLS. Keys are EC P-256 and stay in the test's run directory.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

export interface TestPki {
  dir: string;
  caFile: string;
  /** Issues a certificate for `name` (server: SANs 127.0.0.1 and localhost; client: clientAuth). */
  issue(name: string, kind: 'server' | 'client'): { certFile: string; keyFile: string };
}

export function makePki(dir: string, caName = 'external-signals test CA'): TestPki {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const openssl = (args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  const caKey = path.join(dir, 'ca.key');
  const caFile = path.join(dir, 'ca.crt');
  // PKCS#8 keys (genpkey): what every client library reads.
  const newKey = (file: string) => openssl(['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', file]);
  newKey(caKey);
  openssl(['req', '-x509', '-new', '-key', caKey, '-days', '2', '-subj', `/CN=${caName}`, '-out', caFile]);
  return {
    dir,
    caFile,
    issue(name, kind) {
      const keyFile = path.join(dir, `${name}.key`);
      const csr = path.join(dir, `${name}.csr`);
      const certFile = path.join(dir, `${name}.crt`);
      const ext = path.join(dir, `${name}.ext`);
      fs.writeFileSync(
        ext,
        kind === 'server' ? 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth,clientAuth\n' : 'extendedKeyUsage=clientAuth\n',
      );
      newKey(keyFile);
      openssl(['req', '-new', '-key', keyFile, '-subj', `/CN=${name}`, '-out', csr]);
      openssl(['x509', '-req', '-in', csr, '-CA', caFile, '-CAkey', caKey, '-CAcreateserial', '-days', '2', '-extfile', ext, '-out', certFile]);
      fs.chmodSync(keyFile, 0o600);
      return { certFile, keyFile };
    },
  };
}
