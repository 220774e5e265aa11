import type { AttemptLog, DeliveryAttempt } from './attempts';
import { newEndpointId, normalEventTypes, type CallbackEndpoint, type EndpointStore } from './endpoints';
import type { CallbackEventType } from '../domain/callback';
import { CallbackRefused, resolveCallbackTarget, type GuardSettings, type Resolve } from './guard';
import { newEndpointSecret, type SecretBox } from './secret-box';
import { secretBinding } from './attempt';

/** Callback endpoints per owner: one per receiving system (a bot, a sheet, an alerting tool) and a spare. */
export const MAX_ENDPOINTS_PER_OWNER = 5;

/**
 * The owner's callback use cases, keyed by the registry's owner string: what the admin CLI calls today and the owner
 * API calls once owners sign in. The caller has established who the owner is; nothing here takes an owner from input
 * it has not authenticated.
 */

/** An endpoint as its owner sees it: never the secret (shown once, at registration). */
interface EndpointView {
  id: string;
  url: string;
  createdAt: string;
  enabled: boolean;
  /** The event types it gets; absent: every type. */
  eventTypes?: CallbackEventType[];
}

export interface OwnerCallbacksDeps {
  endpoints: EndpointStore;
  attempts: AttemptLog;
  box: SecretBox | undefined;
  guard: GuardSettings;
  maxEndpointsPerOwner: number;
  resolve?: Resolve;
  now?: () => number;
}

/** A registration the rules refuse: the URL (CallbackRefused says why), too many endpoints, or no key to seal with. */
export class CallbackRegistrationRefused extends Error {
  constructor(
    readonly reason: 'url_refused' | 'too_many_endpoints' | 'not_configured',
    message: string,
  ) {
    super(message);
  }
}

export interface OwnerCallbacks {
  /**
   * Registers an endpoint, for every event type or only those listed (validated by the caller: eventTypesSchema);
   * the secret is returned this once and never again.
   */
  register(owner: string, url: string, eventTypes?: readonly CallbackEventType[]): Promise<{ endpoint: EndpointView; secret: string }>;
  list(owner: string): Promise<EndpointView[]>;
  /** false when the owner has no such endpoint. */
  remove(owner: string, endpointId: string): Promise<boolean>;
  setEnabled(owner: string, endpointId: string, enabled: boolean): Promise<boolean>;
  /** The owner's recent delivery attempts, newest first. */
  recentAttempts(owner: string, limit: number): Promise<DeliveryAttempt[]>;
}

export function ownerCallbacks(deps: OwnerCallbacksDeps): OwnerCallbacks {
  const now = deps.now ?? Date.now;
  return {
    async register(owner, url, eventTypes) {
      if (!deps.box) throw new CallbackRegistrationRefused('not_configured', 'callbacks are not configured: CALLBACK_SECRET_KEY_FILE is not set');
      let checked: URL;
      try {
        // The same guard as every delivery: a URL that could not be delivered to is refused now, not retried for a day.
        checked = (await resolveCallbackTarget(url, deps.guard, deps.resolve)).url;
      } catch (err) {
        if (err instanceof CallbackRefused) throw new CallbackRegistrationRefused('url_refused', err.message);
        throw err;
      }
      const id = newEndpointId();
      const secret = newEndpointSecret();
      const endpoint: CallbackEndpoint = {
        id,
        url: checked.toString(),
        sealedSecret: deps.box.seal(secret, secretBinding(owner, id)),
        createdAt: new Date(now()).toISOString(),
        enabled: true,
        ...(eventTypes !== undefined && eventTypes.length > 0 ? { eventTypes: normalEventTypes(eventTypes) } : {}),
      };
      if ((await deps.endpoints.add(owner, endpoint, deps.maxEndpointsPerOwner)) === 'full') {
        throw new CallbackRegistrationRefused('too_many_endpoints', `an owner may have at most ${deps.maxEndpointsPerOwner} callback endpoints`);
      }
      return { endpoint: view(endpoint), secret };
    },
    async list(owner) {
      return (await deps.endpoints.list(owner)).map(view);
    },
    remove: (owner, endpointId) => deps.endpoints.remove(owner, endpointId),
    setEnabled: (owner, endpointId, enabled) => deps.endpoints.setEnabled(owner, endpointId, enabled),
    recentAttempts: (owner, limit) => deps.attempts.recent(owner, limit),
  };
}

function view(e: CallbackEndpoint): EndpointView {
  return { id: e.id, url: e.url, createdAt: e.createdAt, enabled: e.enabled, ...(e.eventTypes ? { eventTypes: e.eventTypes } : {}) };
}
