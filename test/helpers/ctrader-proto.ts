import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from '../../support/infra';

/**
 * Spotware's published Open API definitions (../shared/reference/ctrader-open-api/*.proto), read as text: enums
 * (name → number) and messages (field → type and label). The double checks every request against them and a unit
 * test checks src/ctrader/messages.ts against them, so neither can drift into guesses.
 */

interface ProtoField {
  label: 'required' | 'optional' | 'repeated';
  type: string;
}

export interface ProtoDefinitions {
  dir: string;
  enums: Map<string, Map<string, number>>;
  messages: Map<string, Map<string, ProtoField>>;
}

/** The checkout this one was cloned from, when it is a directory on this machine (a clone into a temporary directory). */
function originCheckout(): string | undefined {
  try {
    const url = execFileSync('git', ['-C', REPO_ROOT, 'remote', 'get-url', 'origin'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    const dir = url.startsWith('file://') ? url.slice('file://'.length) : url;
    return path.isAbsolute(dir) && fs.existsSync(dir) ? dir : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Where the reference lives: $CTRADER_OPEN_API_REFERENCE if set; else ../shared beside the checkout (CI, the lead's
 * tree) or beside its parent (a worktree); else beside the checkout it was cloned from. It is read, not copied into
 * the project (its README asks so).
 */
function referenceDir(): string | undefined {
  const explicit = process.env.CTRADER_OPEN_API_REFERENCE;
  if (explicit) return explicit;
  const roots = [REPO_ROOT, originCheckout()].filter((r): r is string => r !== undefined);
  const candidates = roots.flatMap((root) =>
    [path.resolve(root, '..', 'shared'), path.resolve(root, '..', '..', 'shared')].map((d) => path.join(d, 'reference', 'ctrader-open-api')),
  );
  return candidates.find((d) => fs.existsSync(path.join(d, 'OpenApiMessages.proto')));
}

let cached: ProtoDefinitions | undefined;

export function loadProto(): ProtoDefinitions {
  if (cached) return cached;
  const dir = referenceDir();
  if (!dir)
    throw new Error(
      'the cTrader Open API reference (../shared/reference/ctrader-open-api) is neither beside this checkout nor beside the one it was cloned from; set CTRADER_OPEN_API_REFERENCE to its directory',
    );
  const enums = new Map<string, Map<string, number>>();
  const messages = new Map<string, Map<string, ProtoField>>();
  for (const file of fs.readdirSync(dir).filter((f) => f.endsWith('.proto'))) {
    const text = fs
      .readFileSync(path.join(dir, file), 'utf8')
      .replace(/\/\*[\s\S]*?\*\//g, '')
      .replace(/\/\/.*$/gm, '');
    for (const m of text.matchAll(/\benum\s+(\w+)\s*\{([^}]*)\}/g)) {
      const values = new Map<string, number>();
      for (const v of m[2]!.matchAll(/(\w+)\s*=\s*(\d+)\s*;/g)) values.set(v[1]!, Number(v[2]));
      enums.set(m[1]!, values);
    }
    for (const m of text.matchAll(/\bmessage\s+(\w+)\s*\{([^}]*)\}/g)) {
      const fields = new Map<string, ProtoField>();
      for (const f of m[2]!.matchAll(/(required|optional|repeated)\s+(\w+)\s+(\w+)\s*=\s*\d+/g))
        fields.set(f[3]!, { label: f[1] as ProtoField['label'], type: f[2]! });
      messages.set(m[1]!, fields);
    }
  }
  cached = { dir, enums, messages };
  return cached;
}

/** PROTO_OA_NEW_ORDER_REQ → ProtoOANewOrderReq; HEARTBEAT_EVENT → ProtoHeartbeatEvent; ERROR_RES → ProtoErrorRes. */
/** Payload types whose message is not named after them in the definitions. */
const IRREGULAR_NAMES = new Map([
  ['PROTO_OA_GET_ACCOUNTS_BY_ACCESS_TOKEN_REQ', 'ProtoOAGetAccountListByAccessTokenReq'],
  ['PROTO_OA_GET_ACCOUNTS_BY_ACCESS_TOKEN_RES', 'ProtoOAGetAccountListByAccessTokenRes'],
]);

export function messageNameOf(payloadType: number, defs = loadProto()): string | undefined {
  const oa = [...(defs.enums.get('ProtoOAPayloadType') ?? [])].find(([, n]) => n === payloadType)?.[0];
  const common = [...(defs.enums.get('ProtoPayloadType') ?? [])].find(([, n]) => n === payloadType)?.[0];
  const enumName = oa ?? common;
  if (!enumName) return undefined;
  const words = enumName
    .replace(/^PROTO_OA_/, '')
    .split('_')
    .map((w) => w.charAt(0) + w.slice(1).toLowerCase());
  const irregular = IRREGULAR_NAMES.get(enumName);
  if (irregular) return irregular;
  const candidates = [oa ? `ProtoOA${words.join('')}` : `Proto${words.join('')}`];
  // The published names are not all regular (ProtoOATraderUpdatedEvent for PROTO_OA_TRADER_UPDATE_EVENT, "ByID").
  return candidates.find((c) => defs.messages.has(c)) ?? [...defs.messages.keys()].find((k) => k.toLowerCase() === candidates[0]!.toLowerCase());
}

/**
 * Why this payload is not a valid instance of its message (unknown field, missing required field, also inside nested
 * entities such as ProtoOAPosition), or undefined. `payloadType` inside the payload is the message's own field 1.
 */
export function checkPayload(payloadType: number, payload: Record<string, unknown>, defs = loadProto()): string | undefined {
  const name = messageNameOf(payloadType, defs);
  if (!name) return `payloadType ${payloadType} is not in ProtoOAPayloadType or ProtoPayloadType`;
  return checkMessage(name, payload, defs);
}

function checkMessage(name: string, value: Record<string, unknown>, defs: ProtoDefinitions): string | undefined {
  const fields = defs.messages.get(name)!;
  for (const [key, v] of Object.entries(value)) {
    const f = fields.get(key);
    if (!f) return `${name} has no field ${key}`;
    if (v === undefined || !defs.messages.has(f.type)) continue;
    const items = f.label === 'repeated' ? (Array.isArray(v) ? v : [v]) : [v];
    for (const item of items) {
      if (typeof item !== 'object' || item === null) return `${name}.${key} must be a ${f.type}`;
      const why = checkMessage(f.type, item as Record<string, unknown>, defs);
      if (why) return why;
    }
  }
  for (const [field, f] of fields) if (f.label === 'required' && field !== 'payloadType' && value[field] === undefined) return `${name}.${field} is required`;
  return undefined;
}
