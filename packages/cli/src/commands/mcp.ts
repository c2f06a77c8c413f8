/**
 * `kura mcp`: a Model Context Protocol server over stdio (the official TypeScript SDK) for AI
 * assistants: Kura's MCP tools (@kura/server's mcp/tools.ts, which `/mcp` on `kura serve`
 * offers over HTTP too) on the store, every one of them (the client is on this machine). Uses
 * the local model when installed (hybrid search). stdout is the protocol's: nothing else is
 * written there.
 */
import type { Command } from 'commander';
import { configuredReranker } from '@kura/store';
import { embedderFor } from '../embedder.js';
import { openStore, storeDir } from '../store.js';
import { passwordConfigured, storePassword } from '../password.js';

export function register(program: Command): void {
  program
    .command('mcp')
    .description('serve the store to an AI assistant over MCP (stdio): tools to add text and files, read, list, search, grep, diff and see versions, tag, set metadata and delete')
    .action(async (_opts: unknown, cmd: Command) => {
      // Loaded here, as `kura serve` loads it: the bundle keeps @kura/server outside (other verbs never load it).
      const { LOCAL_ACCESS, newMcpServer } = await import('@kura/server');
      const { StdioServerTransport } = await import('@modelcontextprotocol/sdk/server/stdio.js');
      const embedder = await embedderFor(undefined);
      const store = await openStore(storeDir(cmd), { readonly: false, requireEncryption: passwordConfigured(cmd) }, () => storePassword(cmd));
      if (embedder) store.useEmbedder(embedder);
      store.useReranker(configuredReranker(process.env)); // KURA_RERANK_URL: the first hits reranked
      const server = await newMcpServer(store, LOCAL_ACCESS);
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
