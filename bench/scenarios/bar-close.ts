/**
 * Scenario 10, bar close: when every strategy on a timeframe fires together, N accounts' alerts arrive at the same
 * instant, each on its account's URL. Every post's answer, and each 202's fill at the paper bridge (its ledger).
 */
import { httpJson, log, StageError } from '../common';
import { tallyOutcomes, type OutcomeTally } from '../outcomes';
import { summarize, type Summary } from '../stats';
import type { Context } from './context';

interface BarClosePost {
  accountId: string;
  /** The HTTP status, or the connection's error code when there was no answer (a reset, a timeout). */
  answer: string;
  signalId?: string;
  /** ms since the epoch when the answer came. */
  answeredAt: number;
  answerMs: number;
}

export interface BarCloseResult {
  accounts: number;
  /** How many posts got each answer (status, or error code). */
  answered: Record<string, number>;
  /** POST → answer, every post that was answered. */
  answerMs: Summary;
  /** First post sent → last answer. */
  allAnsweredMs: number;
  accepted: number;
  filled: number;
  /** 202 → the fill in the paper bridge's ledger, per accepted signal. */
  fillMs: Summary;
  /** Accepted signals filled more than 1 s after their 202. */
  filledLate: number;
  outcomes?: OutcomeTally;
  posts?: BarClosePost[];
}

export async function runBarClose(ctx: Context): Promise<void> {
  const { stack, helpers, opts, results, mark, measure, drainMeasured } = ctx;
  mark('barClose');
  const accounts = stack.accounts.slice(0, opts.barClose);
  log(`scenario 10 (bar close): ${accounts.length} accounts' alerts posted at the same instant, each on its account's URL`);
  const body = JSON.stringify({ secret: stack.secret, action: 'buy', symbol: 'EURUSD', volume: 0.01 });
  const result = await measure(
    'barClose',
    async (): Promise<BarCloseResult> => {
      const t0 = Date.now();
      const posts = await Promise.all(
        accounts.map(async (accountId): Promise<BarClosePost> => {
          const sent = Date.now();
          try {
            const res = await httpJson(`${stack.ingress.url}/webhook/custom/${accountId}`, {
              method: 'POST',
              headers: { 'content-type': 'application/json' },
              body,
              timeoutMs: 20_000,
            });
            const answeredAt = Date.now();
            const signalId = res.status === 202 ? (res.body.signalId as string) : undefined;
            return { accountId, answer: String(res.status), ...(signalId ? { signalId } : {}), answeredAt, answerMs: answeredAt - sent };
          } catch (err) {
            const e = err as Error & { cause?: { code?: string } };
            const answeredAt = Date.now();
            return { accountId, answer: e.cause?.code ?? e.name ?? 'error', answeredAt, answerMs: answeredAt - sent };
          }
        }),
      );
      const accepted = posts.filter((p) => p.signalId !== undefined);
      await helpers.infra
        .waitFor(
          `the ${accepted.length} accepted bar-close signals to be filled`,
          async () => {
            stack.ledger.update();
            if (accepted.every((p) => stack.ledger.bySignal.has(p.signalId!))) return true;
            return (await stack.client.workflow.count('ExecutionStatus="Running"')).count === 0;
          },
          120_000,
          50,
        )
        .catch((err: Error) => log(`bar close: ${err.message}; the figures cover the fills seen by then`));
      stack.ledger.update();
      const fills = accepted.flatMap((p) => {
        const fill = stack.ledger.bySignal.get(p.signalId!)?.[0];
        return fill ? [fill.t - p.answeredAt] : [];
      });
      const answered: Record<string, number> = {};
      for (const p of posts) answered[p.answer] = (answered[p.answer] ?? 0) + 1;
      return {
        accounts: accounts.length,
        answered,
        answerMs: summarize(posts.filter((p) => /^\d+$/.test(p.answer)).map((p) => p.answerMs)),
        allAnsweredMs: Math.max(...posts.map((p) => p.answeredAt)) - t0,
        accepted: accepted.length,
        filled: fills.length,
        fillMs: summarize(fills),
        filledLate: fills.filter((ms) => ms > 1000).length,
        posts,
      };
    },
    (r) => r.accepted,
  );
  results.barClose = result;
  log(
    `bar close: answers ${JSON.stringify(result.answered)} (all within ${result.allAnsweredMs} ms); ${result.filled} of ${result.accepted} filled, 202 → filled p50 ${result.fillMs.p50} ms, p99 ${result.fillMs.p99} ms, max ${result.fillMs.max} ms; ${result.filledLate} later than 1 s`,
  );
  results.drains.barClose = await drainMeasured('barClose', 'scenario 10', result.accepted);
  result.outcomes = await tallyOutcomes(
    httpJson,
    stack.ingress.url,
    stack.token,
    (result.posts ?? []).flatMap((p) => (p.signalId ? [p.signalId] : [])),
  );
  log(`bar close outcomes through the poll: ${JSON.stringify(result.outcomes)}`);
  if (result.accepted === 0) throw new StageError(`scenario 10: no 202 at all: ${JSON.stringify(result.answered)}`);
}
