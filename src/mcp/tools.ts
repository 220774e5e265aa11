import { z } from 'zod';
import { formatBytes, SPEC_LIMITS } from '../domain/limits';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { API_VERSION } from '../http/openapi';
import { SIGNAL_ID_PATTERN } from '../domain/ids';
import { getSignalStatusOutput, submitSignalOutput } from './outputs';
import { describeActionFields, isOpening } from '../domain/actions';
import { externalSignalShape, signalFields, type ExternalSignal } from '../domain/signal';
import { MAX_RETRY_SPAN_MS, reportedCount, SignalsClient, StatusError, UnexpectedResponseError, type SignalStatus, type SubmitResult } from '../client';

/**
 * The MCP tools over the typed client: an AI agent submits signals and reads outcomes; the webhook secret and the API
 * token stay in this process (environment of the MCP server) and never appear in a tool's input, result or log.
 */

export interface McpConfig {
  baseUrl: string;
  /** SIGNALS_WEBHOOK_SECRET; submit_signal refuses to run without it. */
  webhookSecret?: string;
  /** SIGNALS_API_TOKEN; get_signal_status refuses to run without it. */
  apiToken?: string;
}

const DEFAULT_BASE_URL = 'http://127.0.0.1:8080';
const MAX_WAIT_MS = 30_000;

export function loadMcpConfig(env: NodeJS.ProcessEnv = process.env): McpConfig {
  const baseUrl = (env.SIGNALS_BASE_URL ?? '').trim() || DEFAULT_BASE_URL;
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new Error('SIGNALS_BASE_URL is not a valid URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('SIGNALS_BASE_URL must be an http(s) URL');
  const secret = env.SIGNALS_WEBHOOK_SECRET?.trim();
  const token = env.SIGNALS_API_TOKEN?.trim();
  return { baseUrl, ...(secret ? { webhookSecret: secret } : {}), ...(token ? { apiToken: token } : {}) };
}

/** submit_signal's arguments: the ExternalSignal of spec §2.1 without `secret`, plus the target account. */
const submitSignalInput = externalSignalShape.omit({ secret: true }).extend({
  idempotencyKey: signalFields.idempotencyKey
    .optional()
    .describe(
      'Omit for a new action (a key is generated). To retry an action whose earlier call did not clearly succeed, pass the idempotencyKey ' +
        'that call returned: within 45 s of the first attempt the service runs it at most once.',
    ),
  accountId: z.string().min(1).max(128).optional().describe('Send to this one trading account. Omit to send to every account linked to the webhook secret.'),
});

const getSignalStatusInput = z.strictObject({
  signalId: z
    .string()
    .min(1)
    .max(128)
    .describe('The signalId returned by submit_signal: "sig_" followed by 20 to 40 letters and digits (1 to 128 characters are accepted).'),
  waitMs: z
    .int()
    .min(0)
    .max(MAX_WAIT_MS)
    .optional()
    .describe(`Wait up to this many milliseconds (a whole number, 0 to ${MAX_WAIT_MS}) for the outcomes to arrive; omit or 0 to read once.`),
  expectAccounts: z
    .int()
    .min(1)
    .max(10_000)
    .optional()
    .describe(
      'How many account outcomes to wait for (a whole number, 1 to 10000): the accountsResolved of submit_signal (remembered for signals submitted in this session; else 1).',
    ),
});

const INSTRUCTIONS = [
  "Submits the user's own trade signals to their own MT5/cTrader accounts through the External Signals service, and reads outcomes.",
  'submit_signal answers at once: "accepted" means queued for execution, not executed.',
  'Then call get_signal_status with the signalId (waitMs up to 30000) to see, per account, "filled" with the broker ticket or "rejected" with the reason.',
  'Only entries (buy, sell and the pending/stop orders) report outcomes here; close, modify, cancel and breakeven never do: their outcome is in the ' +
    "owner's dashboard and pushed to the owner's callbacks as signal.exit_outcome. A pending entry's \"filled\" means the order was placed (entry: order), not executed.",
  'Never resend a signal that was accepted or partially accepted: that would trade twice.',
  'The service is not a broker and gives no investment advice.',
].join(' ');

export interface ToolDeps {
  config: McpConfig;
  /** Defaults to a client on config.baseUrl. */
  client?: SignalsClient;
}

export function createSignalsMcpServer(deps: ToolDeps): McpServer {
  const { config } = deps;
  const client = deps.client ?? new SignalsClient({ baseUrl: config.baseUrl });
  const credentials = [config.webhookSecret, config.apiToken].filter((c): c is string => !!c);
  /** accountsResolved of the signals submitted through this server: the default expectAccounts of a wait. */
  const routed = new Map<string, number>();

  const server = new McpServer({ name: 'external-signals', version: API_VERSION }, { instructions: INSTRUCTIONS });

  server.registerTool(
    'submit_signal',
    {
      title: 'Submit a trade signal',
      description:
        "Sends a trade signal (spec ExternalSignal, without the secret: this server adds it) for execution on the user's own trading account(s), " +
        "with the account owner's risk rules applied. Fields by action (lots at most 100): " +
        `${describeActionFields()}. A field the action does not use is refused. The answer is immediate: accepted is not executed; ` +
        'poll get_signal_status for entries. Transient failures are retried safely (same idempotency key) for up to 30 s.',
      inputSchema: submitSignalInput,
      outputSchema: submitSignalOutput,
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
    },
    async (args) =>
      guard(credentials, async () => {
        if (!config.webhookSecret) {
          return failure('this MCP server has no webhook secret configured (SIGNALS_WEBHOOK_SECRET); the operator must set it. Nothing was sent.');
        }
        const { accountId, idempotencyKey, ...fields } = args;
        const signal = { ...fields, secret: config.webhookSecret } as ExternalSignal;
        const result = await client.submit(signal, {
          ...(accountId !== undefined ? { accountId } : {}),
          ...(idempotencyKey !== undefined ? { idempotencyKey } : {}),
        });
        if (result.kind === 'accepted' || result.kind === 'partially_accepted') {
          routed.set(result.signalId, result.accountsResolved);
          // A long session keeps only its recent signals.
          if (routed.size > 1000) routed.delete(routed.keys().next().value!);
        }
        return {
          content: [{ type: 'text', text: describeSubmit(result, fields.action) }],
          structuredContent: { ...result },
          isError: result.kind === 'refused' || result.kind === 'gave_up',
        };
      }),
  );

  server.registerTool(
    'get_signal_status',
    {
      title: "Read a signal's outcome",
      description:
        'Reads the per-account outcome of an entry signal submitted earlier: "filled" with the broker ticket, or "rejected" with the reason. ' +
        'status pending_or_unknown means no outcome yet (or an unknown signalId). With waitMs (≤ 30000) it waits for the outcomes to arrive. ' +
        'Results of close, modify, cancel and breakeven are never reported here.',
      inputSchema: getSignalStatusInput,
      outputSchema: getSignalStatusOutput,
      annotations: { readOnlyHint: true, openWorldHint: true },
    },
    async (args) =>
      guard(credentials, async () => {
        if (!config.apiToken) {
          return failure('this MCP server has no API token configured (SIGNALS_API_TOKEN); the operator must set it.');
        }
        // An id the service could never have issued is not "still running": say so instead of "poll again".
        if (!SIGNAL_ID_PATTERN.test(args.signalId)) {
          return failure(
            `"${args.signalId}" is not a signalId the service issues ("sig_" followed by 20 to 40 letters and digits): no signal has it. ` +
              'Check it against the signalId submit_signal returned.',
          );
        }
        const waitMs = args.waitMs ?? 0;
        const known = routed.has(args.signalId) ? 'submitted_in_this_session' : 'not_submitted_in_this_session';
        const expectAccounts = args.expectAccounts ?? routed.get(args.signalId) ?? 1;
        try {
          if (waitMs > 0) {
            const waited = await client.waitForOutcome(args.signalId, { token: config.apiToken, expectAccounts, deadlineMs: waitMs });
            return statusResult(waited.status, expectAccounts, waited.complete, waitMs, known);
          }
          const status = await client.status(args.signalId, { token: config.apiToken });
          return statusResult(status, expectAccounts, reportedCount(status) >= expectAccounts, 0, known);
        } catch (err) {
          // No structuredContent on an error: hosts check it against the tool's output schema, which is the status's.
          if (err instanceof StatusError) return failure(describeStatusError(err));
          throw err;
        }
      }),
  );

  return server;
}

// ---------------------------------------------------------------------------------------------------------------
// Results an agent can act on

function failure(text: string): CallToolResult {
  return { content: [{ type: 'text', text }], isError: true };
}

/** Runs a tool body; whatever comes out (a result or an unexpected error) has every credential removed. */
async function guard(credentials: string[], body: () => Promise<CallToolResult>): Promise<CallToolResult> {
  let result: CallToolResult;
  try {
    result = await body();
  } catch (err) {
    if (err instanceof UnexpectedResponseError) {
      result = failure(
        `${err.message}. The service did not answer as documented; do not resend blindly` +
          `${err.info.idempotencyKey ? ` (if you retry, reuse idempotencyKey "${err.info.idempotencyKey}" within 45 s)` : ''}.`,
      );
    } else {
      result = failure(`internal error of the MCP server: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  return redact(result, credentials);
}

function redact<T>(value: T, credentials: string[]): T {
  let json = JSON.stringify(value);
  for (const c of credentials) json = json.split(c).join('[redacted]');
  // A credential with JSON-escaped characters is caught in its escaped form too.
  for (const c of credentials) json = json.split(JSON.stringify(c).slice(1, -1)).join('[redacted]');
  return JSON.parse(json) as T;
}

const REFUSAL_HINTS: Record<number, string> = {
  400: 'fix the field(s) named above and call submit_signal again',
  401: 'the webhook secret of this MCP server was not accepted, or the accountId is not linked to it; check the accountId, otherwise the operator must fix the configuration — retrying as is will not help',
  403: 'the target account is locked or not entitled to execute signals; retrying will not help',
  409: 'this account type does not accept signals (e.g. a copy-only master account); use another account',
  412: "the account's bridge (EA/cBot) is too old for this action; it must be updated first",
  413: `the signal is larger than ${formatBytes(SPEC_LIMITS.bodyLimitBytes)}; shorten meta`,
};

function describeSubmit(result: SubmitResult, action: ExternalSignal['action']): string {
  switch (result.kind) {
    case 'accepted': {
      const replay = result.replayed ? ' This was a replay: an earlier call with the same idempotencyKey had already been accepted; nothing new was sent.' : '';
      const next = isOpening(action)
        ? `Accepted means queued, not executed: poll with get_signal_status {"signalId":"${result.signalId}","waitMs":15000}.`
        : `Accepted means queued, not executed. The outcome of ${action} is not reported by get_signal_status (do not poll it): the owner sees it in the dashboard and, with callbacks, as signal.exit_outcome.`;
      return `accepted: signalId ${result.signalId}, routed to ${result.accountsResolved} account(s).${replay} ${next} Do not resend it.`;
    }
    case 'partially_accepted':
      return (
        `partially accepted (HTTP 503): signalId ${result.signalId}; some of the ${result.accountsResolved} account(s) could not be queued. ` +
        `Poll before resending: get_signal_status {"signalId":"${result.signalId}","waitMs":15000}. A resend would trade again on the accounts ` +
        `that did get it, unless it reuses idempotencyKey "${result.idempotencyKey}" within 45 s of the first attempt.`
      );
    case 'no_targets':
      return (
        'no targets: the secret is valid but no linked account can take this signal (locked, not entitled, copy-only master, or a bridge too old ' +
        `for the action). Nothing will run and there is nothing to poll (correlationId ${result.correlationId}).`
      );
    case 'refused': {
      const what = result.details?.length ? result.details.map((d) => (d.path ? `${d.path}: ${d.message}` : d.message)).join('; ') : result.error;
      const where = result.local ? ' (checked before sending; nothing was sent)' : '';
      const hint = REFUSAL_HINTS[result.status] ?? 'not retried: the same request would get the same answer';
      const trace = result.correlationId ? ` (correlationId ${result.correlationId})` : '';
      return `refused ${result.status}${where}: ${what} — ${hint}.${trace}`;
    }
    case 'gave_up': {
      const last = result.lastStatus === null ? result.error : `HTTP ${result.lastStatus}: ${result.error}`;
      const why = result.reason === 'deadline' ? 'the time budget ran out' : 'the attempts ran out';
      const head = `not accepted: ${why} after ${result.attempts} attempt(s); last: ${last}.`;
      if (result.mayHaveRun) {
        return (
          `${head} The signal MAY have been accepted. Do not send it again with a new key. To retry, call submit_signal with the same fields and ` +
          `idempotencyKey "${result.idempotencyKey}" — only within ${Math.round(MAX_RETRY_SPAN_MS / 1000)} s of the first attempt; after that, ` +
          'check the account with the user before sending anything.'
        );
      }
      const wait = result.retryAfterSeconds !== undefined ? `after ${result.retryAfterSeconds} s or later` : 'in a little while';
      return `${head} Nothing was accepted; it is safe to submit again ${wait}.`;
    }
  }
}

function statusResult(
  status: SignalStatus,
  expectAccounts: number,
  complete: boolean,
  waitedMs: number,
  known: 'submitted_in_this_session' | 'not_submitted_in_this_session',
): CallToolResult {
  const reported = reportedCount(status);
  const lines = status.accounts.map((a) =>
    a.outcome === 'filled' ? `${a.accountId} ${filledText(a)}` : `${a.accountId} rejected (reason: ${a.reason ?? 'n/a'})`,
  );
  let text: string;
  if (status.status === 'reported') {
    text = `signalId ${status.signalId}: ${reported} of ${expectAccounts} account(s) reported — ${lines.join('; ')}.`;
    if (!complete) text += ` Still waiting for ${expectAccounts - reported} account(s): poll again with waitMs.`;
  } else {
    text =
      `signalId ${status.signalId}: pending_or_unknown — no outcome yet${waitedMs > 0 ? ` after waiting ${waitedMs} ms` : ''}. ` +
      `Poll again, e.g. get_signal_status {"signalId":"${status.signalId}","waitMs":${MAX_WAIT_MS}}. An unknown signalId, and any close/modify/cancel ` +
      'signal, also stays pending_or_unknown.';
    if (known === 'not_submitted_in_this_session') {
      text += ' This session did not submit this signalId: if it keeps answering pending_or_unknown, check it for a typo.';
    }
  }
  return {
    content: [{ type: 'text', text }],
    structuredContent: { ...status, reported, expectAccounts, complete, signalIdKnown: known },
  };
}

/** A pending entry's "filled" is a placed order, not an execution: said so, so nobody reads it as a trade. */
function filledText(a: SignalStatus['accounts'][number]): string {
  if (a.entry === 'order') return `order placed, not executed yet (ticket ${a.ticket ?? 'n/a'})`;
  const fill = a.fill ? ` ${a.fill.volume} lots at ${a.fill.price}` : '';
  return `filled${fill} (ticket ${a.ticket ?? 'n/a'})`;
}

function describeStatusError(err: StatusError): string {
  const retryIn = err.info.retryAfterSeconds !== undefined ? ` in ${err.info.retryAfterSeconds} s` : ' in a few seconds';
  switch (err.kind) {
    case 'unauthorized':
      return 'the API token of this MCP server was refused (401); the operator must fix SIGNALS_API_TOKEN. Retrying will not help.';
    case 'token_suspended':
      return `the API token is temporarily suspended${err.info.suspendedUntil ? ` until ${err.info.suspendedUntil}` : ''} (403); try again after that.`;
    case 'rate_limited':
      return `rate limited (429${err.info.scope ? `, ${err.info.scope}` : ''}): ${err.message}. Slow down and poll again${retryIn}.`;
    case 'server_error':
    case 'unavailable':
    case 'network':
      return `the status could not be read (${err.info.httpStatus ?? 'no answer'}: ${err.message}); it is safe to poll again${retryIn}.`;
    case 'unexpected':
      return `the status poll answered unexpectedly: ${err.message}`;
  }
}
