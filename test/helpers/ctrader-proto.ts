import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from '../../support/infra';
import { addDescriptors, type DescriptorField } from './protobuf-descriptor';

/**
 * Spotware's published Open API definitions, from a pinned registry package: enums (name → number) and messages
 * (field → type and label). The double checks every request against them and a unit
 * test checks src/ctrader/messages.ts against them, so neither can drift into guesses.
 */

type ProtoField = DescriptorField;

export interface ProtoDefinitions {
  dir: string;
  enums: Map<string, Map<string, number>>;
  messages: Map<string, Map<string, ProtoField>>;
}

/**
 * Where the definitions are: $CTRADER_OPEN_API_DEFINITIONS if set (a directory of .proto or protoc `_pb2.py` files);
 * else the pinned registry package scripts/ensure-ctrader-definitions.sh installs once into the cache outside the
 * checkout and names (docs/ctrader-connector.md says which package and how it compares with the connector's version).
 */
function definitionsDir(): string {
  const explicit = process.env.CTRADER_OPEN_API_DEFINITIONS;
  if (explicit) return explicit;
  const script = path.join(REPO_ROOT, 'scripts', 'ensure-ctrader-definitions.sh');
  return execFileSync('bash', [script], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim();
}

/** A .proto file read as text: enums and messages, comments dropped. */
function addProtoText(source: string, into: ProtoDefinitions): void {
  const text = source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/.*$/gm, '');
  for (const m of text.matchAll(/\benum\s+(\w+)\s*\{([^}]*)\}/g)) {
    const values = new Map<string, number>();
    for (const v of m[2]!.matchAll(/(\w+)\s*=\s*(\d+)\s*;/g)) values.set(v[1]!, Number(v[2]));
    into.enums.set(m[1]!, values);
  }
  for (const m of text.matchAll(/\bmessage\s+(\w+)\s*\{([^}]*)\}/g)) {
    const fields = new Map<string, ProtoField>();
    for (const f of m[2]!.matchAll(/(required|optional|repeated)\s+(\w+)\s+(\w+)\s*=\s*\d+/g))
      fields.set(f[3]!, { label: f[1] as ProtoField['label'], type: f[2]! });
    into.messages.set(m[1]!, fields);
  }
}

let cached: ProtoDefinitions | undefined;

export function loadProto(): ProtoDefinitions {
  if (cached) return cached;
  const dir = definitionsDir();
  const defs: ProtoDefinitions = { dir, enums: new Map(), messages: new Map() };
  for (const file of fs.readdirSync(dir).sort()) {
    if (file.endsWith('.proto')) addProtoText(fs.readFileSync(path.join(dir, file), 'utf8'), defs);
    else if (file.endsWith('_pb2.py')) addDescriptors(fs.readFileSync(path.join(dir, file), 'latin1'), defs);
  }
  if (!defs.enums.has('ProtoOAPayloadType')) throw new Error(`no cTrader Open API definitions (ProtoOAPayloadType) in ${dir}`);
  cached = defs;
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
