import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { createSignalsMcpServer, loadMcpConfig } from './tools';

/**
 * `npm run mcp`: the External Signals MCP server on stdio (docs/integrations/ai-agents.md).
 * Configured by SIGNALS_BASE_URL, SIGNALS_WEBHOOK_SECRET and SIGNALS_API_TOKEN. stdout carries the protocol only; the
 * one log line goes to stderr and names no credential.
 */
export async function main(env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const config = loadMcpConfig(env);
  const server = createSignalsMcpServer({ config });
  const transport = new StdioServerTransport();
  await server.connect(transport);
  const missing = [!config.webhookSecret && 'SIGNALS_WEBHOOK_SECRET', !config.apiToken && 'SIGNALS_API_TOKEN'].filter(Boolean);
  process.stderr.write(
    `external-signals MCP server on stdio, service at ${new URL(config.baseUrl).origin}` + `${missing.length > 0 ? `; not set: ${missing.join(', ')}` : ''}\n`,
  );
  const stop = () => {
    void server.close().finally(() => process.exit(0));
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  process.stdin.on('close', stop);
}

if (require.main === module) {
  main().catch((err: unknown) => {
    process.stderr.write(`external-signals MCP server failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  });
}
