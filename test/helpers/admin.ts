/** The admin CLI in process: shared with the bench (support/admin-cli.ts). */
export { adminCli, adminCliJson } from '../../support/admin-cli';
