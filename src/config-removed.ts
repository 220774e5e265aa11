/**
 * Settings the service no longer reads (CHANGELOG, "Fewer settings"): internal tuning became a constant in the code
 * that uses it, and a few settings became part of another one. An operator who still sets one is told at start, by
 * name, rather than left believing it works: the same refusal as a bad value (src/config.ts), one line per name.
 */
const FIXED = 'no longer a setting (CHANGELOG, "Fewer settings"): fixed at';
const TEMPORAL_TLS_MOVED = 'no longer a setting: give the region tls and apiKeyFile in TEMPORAL_REGIONS (docs/configuration.md)';
const DOOR_CHANGED =
  'no longer a setting: a slow or absent Temporal no longer shuts the door; it shuts only when Redis cannot hold what a 202 promises (docs/admission-control.md)';
const LIMIT_FIXED = 'no longer a setting: the per-caller limits are fixed (docs/configuration.md); raise them all with RATE_LIMIT_SCALE';

export const REMOVED_SETTINGS: Readonly<Record<string, string>> = {
  DISPATCH_AT_ACCEPTANCE: 'no longer a setting: the ingress always queues the commands at acceptance, before the answer',
  ADMISSION_LATE_AFTER_MS: DOOR_CHANGED,
  ADMISSION_SUPERVISION_LAG_MS: DOOR_CHANGED,
  ADMISSION_MAX_LATE: DOOR_CHANGED,
  ADMISSION_LOST_START_AFTER_MS: DOOR_CHANGED,
  ADMISSION_REFRESH_MS: `${FIXED} 250`,
  REDIS_REPLICA_ACK_TIMEOUT_MS: `${FIXED} 200`,
  BRIDGE_REDELIVER_AFTER_MS: `${FIXED} 15000`,
  TEMPORAL_TLS: TEMPORAL_TLS_MOVED,
  TEMPORAL_TLS_CA_FILE: TEMPORAL_TLS_MOVED,
  TEMPORAL_TLS_CERT_FILE: TEMPORAL_TLS_MOVED,
  TEMPORAL_TLS_KEY_FILE: TEMPORAL_TLS_MOVED,
  TEMPORAL_TLS_SERVER_NAME: TEMPORAL_TLS_MOVED,
  TEMPORAL_API_KEY_FILE: TEMPORAL_TLS_MOVED,
  TEMPORAL_CONNECT_TIMEOUT_MS: `${FIXED} 1000`,
  WORKFLOW_BUNDLE_PATH: 'no longer a setting: the worker runs the bundle built beside it (npm run build)',
  BODY_LIMIT_BYTES: `${FIXED} the spec's 65536`,
  IDEMPOTENCY_KEY_MAX_LENGTH: `${FIXED} the spec's 128`,
  IDEMPOTENCY_WINDOW_MS: `${FIXED} the spec's 45000`,
  BODY_READ_TIMEOUT_MS: `${FIXED} 5000`,
  MAX_OVER_CAP_CONNECTIONS: `${FIXED} 4096`,
  ROUTE_LIMIT_MAX: LIMIT_FIXED,
  ROUTE_LIMIT_WINDOW_MS: LIMIT_FIXED,
  FAIRNESS_ACCOUNT_MAX: LIMIT_FIXED,
  FAIRNESS_ACCOUNT_WINDOW_MS: LIMIT_FIXED,
  FAIRNESS_BROADCAST_MAX: LIMIT_FIXED,
  FAIRNESS_BROADCAST_WINDOW_MS: LIMIT_FIXED,
  POLL_IP_MAX: LIMIT_FIXED,
  POLL_IP_WINDOW_MS: LIMIT_FIXED,
  POLL_ACCOUNT_MAX: LIMIT_FIXED,
  POLL_ACCOUNT_WINDOW_MS: LIMIT_FIXED,
  BRIDGE_LIMIT_MAX: LIMIT_FIXED,
  BRIDGE_LIMIT_WINDOW_MS: LIMIT_FIXED,
  POLL_TEMPORAL_WAIT_MS: `${FIXED} 10`,
  REPORTED_OUTCOMES_KEEP_SECONDS: `${FIXED} 3600`,
  FAIL_CLOSED_RETRY_AFTER_SECONDS: `${FIXED} 5`,
  SESSION_TTL_SECONDS: `${FIXED} 43200`,
  OWNER_SETUP_TTL_SECONDS: `${FIXED} 86400`,
  OWNER_ACCOUNT_CAP: `${FIXED} 10; set another cap per owner with \`admin owner account-cap\``,
  SIGN_IN_IP_MAX: `${FIXED} 20 failed sign-ins per address per 15 minutes`,
  SIGN_IN_IP_WINDOW_MS: `${FIXED} 900000`,
  DEFAULT_MAX_SIGNAL_AGE_MS: `${FIXED} 30000; an account sets its own with maxSignalAgeMs`,
  DEFAULT_COMMAND_TTL_MS: `${FIXED} 300000`,
  RISK_FIGURES_MAX_AGE_MS: `${FIXED} 60000`,
  CALLBACK_ALLOWED_HOSTS: 'no longer read: its name is CALLBACK_ALLOWED_ORIGINS',
  CALLBACK_MAX_ENDPOINTS_PER_OWNER: `${FIXED} 5`,
  CALLBACK_URL_MAX_LENGTH: `${FIXED} 512`,
  CALLBACK_TIMEOUT_MS: `${FIXED} 10000`,
  CALLBACK_RESPONSE_MAX_BYTES: `${FIXED} 4096`,
  CALLBACK_ATTEMPTS_KEEP: `${FIXED} 200`,
  CALLBACK_ATTEMPTS_KEEP_SECONDS: `${FIXED} 604800`,
  CTRADER_OAUTH_REDIRECT_URL: 'no longer a setting: the redirect URI is PUBLIC_URL + /dashboard/ctrader/callback',
  CTRADER_OAUTH_AUTHORIZE_URL: "no longer a setting: Spotware's own page",
  CTRADER_OAUTH_TOKEN_URL: "no longer a setting: Spotware's own endpoint",
  CTRADER_OAUTH_TIMEOUT_MS: `${FIXED} 10000`,
  CTRADER_ACCOUNT_LIST_URL: "no longer a setting: Spotware's wss://live.ctraderapi.com:5036",
};

/** Refuses an environment that sets a removed setting (an empty one counts as unset, as everywhere), naming each. */
export function refuseRemovedSettings(env: NodeJS.ProcessEnv): void {
  const set = Object.keys(REMOVED_SETTINGS).filter((name) => (env[name] ?? '').trim() !== '');
  if (set.length > 0) throw new Error(`Invalid configuration:\n${set.map((name) => `${name}: ${REMOVED_SETTINGS[name]}`).join('\n')}`);
}
