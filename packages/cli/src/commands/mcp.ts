/**
 * `kura mcp`: a Model Context Protocol server over stdio (the official TypeScript SDK) for AI
 * assistants: the tools of mcp-tools.ts on the store. Uses the local model when installed
 * (hybrid search). stdout is the protocol's: nothing else is written there.
 */
import type { Command } from 'commander';
import { configuredReranker } from '@kura/store';
import { VERSION } from '../version.js';
import { embedderFor } from '../embedder.js';
import { registerTools } from '../mcp-tools.js';
import { openStore, storeDir } from '../store.js';

export function register(program: Command): void {
  program
    .command('mcp')
    .description('serve the store to an AI assistant over MCP (stdio): add, get, list, search, versions')
    .action(async (_opts: unknown, cmd: Command) => {
      const { McpServer } = await import('@modelcontextprotocol/sdk/server/mcp.js');
      const { StdioServerTransport } = await import('@modelcontextprotocol/sdk/server/stdio.js');
      const embedder = await embedderFor(undefined);
      const store = await openStore(storeDir(cmd), { readonly: false });
      if (embedder) store.useEmbedder(embedder);
      store.useReranker(configuredReranker(process.env)); // KURA_RERANK_URL: the first hits reranked
      const server = new McpServer({ name: 'kura', version: VERSION });
      registerTools(server, store);
      const closed = new Promise<void>((resolve) => {
        server.server.onclose = () => resolve();
      });
      await server.connect(new StdioServerTransport());
      process.stdin.once('end', () => void server.close());
      await closed;
      await store.close();
      await embedder?.close();
    });
}
