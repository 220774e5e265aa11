/**
 * Workflow histories to and from Temporal's JSON form (the form `temporal workflow show -o json` writes and the UI
 * downloads). Not through `historyToJSON`/`historyFromJSON` of @temporalio/common/lib/proto-utils: in this install
 * @temporalio/common and @temporalio/proto each carry their own copy of protobufjs, and protojson of the one refuses
 * the types of the other ("type must be a Type"); Worker.runReplayHistory calls historyFromJSON on a JSON history, so
 * replay is handed the decoded History instead. Both directions here use the protobufjs that @temporalio/proto itself
 * resolves, whichever way npm lays the copies out.
 */
import path from 'node:path';
import * as proto from '@temporalio/proto';
import { patchProtobufRoot } from '@temporalio/proto/lib/patch-protobuf-root';

type History = proto.temporal.api.history.v1.IHistory;
type ProtoJson = {
  toJson(type: unknown, message: unknown): unknown;
  fromJson(type: unknown, json: unknown, options?: { ignoreUnknownFields?: boolean }): unknown;
};

// Loaded from where @temporalio/proto resolves it (npm installed two protobufjs copies): a path known only at run time.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const protojson = require(require.resolve('protobufjs/ext/protojson', { paths: [path.dirname(require.resolve('@temporalio/proto'))] })) as ProtoJson;
const historyType = (patchProtobufRoot(proto) as unknown as { lookupType(name: string): unknown }).lookupType('temporal.api.history.v1.History');

/** The history as Temporal's JSON object (ready for JSON.stringify). */
export function historyToJsonObject(history: History): unknown {
  return protojson.toJson(historyType, proto.temporal.api.history.v1.History.fromObject(history));
}

/** Temporal's JSON form of a history (as written by historyToJsonObject or `temporal workflow show -o json`) decoded. */
export function historyFromJsonObject(json: unknown): History {
  if (typeof json !== 'object' || json === null || !Array.isArray((json as { events?: unknown }).events)) throw new TypeError('not a history: no events');
  const history = protojson.fromJson(historyType, json, { ignoreUnknownFields: true });
  if (history === null) throw new TypeError('not a history');
  return history as History;
}
